//! Deciding whether a call may run: policy defaults and modes, in-process approvers,
//! approval tickets across requests, partial batches, dry runs, rate limits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::approval::{
    ApprovalAnswer, ApprovalRequest, DecidedCall, MemoryPendingStore, PendingCall, PendingStore,
    TicketError,
};
use toolgate::policy::{Decision, PolicyMode, PolicyRequest};
use toolgate::prelude::*;
use toolgate::rate_limits::RateLimit;
use toolgate::store::StoreFuture;

/// Side effects, by account or recipient: tests run in parallel, so each uses its own names
/// and counts only those.
static DELETED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static TRANSFERS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn count(log: &Mutex<Vec<String>>, name: &str) -> usize {
    log.lock()
        .unwrap()
        .iter()
        .filter(|entry| *entry == name)
        .count()
}

/// Read a balance.
#[tool(permission = "user", group = "bank", read_only)]
fn balance(account: String) -> String {
    format!("{account}: 100")
}

/// Rename an account (a plain write: low risk, not destructive).
#[tool(permission = "user", group = "bank")]
fn rename(account: String, name: String) -> String {
    format!("{account} is now {name}")
}

/// Delete an account.
#[tool(permission = "user", group = "bank", destructive)]
fn delete_account(account: String) -> String {
    DELETED.lock().unwrap().push(account.clone());
    format!("deleted {account}")
}

/// Move money.
#[tool(permission = "user", group = "bank", risk = "high")]
fn transfer(#[schemars(range(min = 1, max = 1000))] amount: u32, to: String) -> String {
    TRANSFERS.lock().unwrap().push(to.clone());
    format!("sent {amount} to {to}")
}

/// Shut everything down.
#[tool(permission = "user", group = "ops", risk = "critical")]
fn shutdown() -> &'static str {
    "bye"
}

fn builder() -> toolgate::RegistryBuilder {
    Registry::builder().roles(["user", "admin"])
}

fn user() -> Caller {
    Caller::new("alice", "user")
}

fn code(outcome: &ToolOutcome) -> String {
    match &outcome.result {
        Ok(_) => "ok".into(),
        Err(error) => error.code.to_string(),
    }
}

fn ticket(outcome: &ToolOutcome) -> String {
    outcome.error().unwrap().details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn call(registry: &Registry, name: &str, arguments: Value) -> ToolOutcome {
    registry
        .call(
            &user(),
            ToolCall::new(format!("id-{name}"), name, arguments),
        )
        .await
}

#[tokio::test]
async fn defaults_read_only_and_plain_writes_run_risky_tools_wait_for_approval() {
    let registry = builder().build().unwrap();
    assert_eq!(
        code(&call(&registry, "balance", json!({"account": "a"})).await),
        "ok"
    );
    assert_eq!(
        code(&call(&registry, "rename", json!({"account": "a", "name": "b"})).await),
        "ok"
    );
    for (name, arguments, why) in [
        (
            "delete_account",
            json!({"account": "a"}),
            "`delete_account` is destructive",
        ),
        (
            "transfer",
            json!({"amount": 5, "to": "bob"}),
            "`transfer` is high risk",
        ),
        ("shutdown", json!({}), "`shutdown` is critical risk"),
    ] {
        let outcome = call(&registry, name, arguments).await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::ApprovalRequired, "{name}");
        assert!(error.message.contains(why), "{}", error.message);
        assert!(
            error.message.contains("it has not run"),
            "{}",
            error.message
        );
    }
    assert_eq!(
        registry
            .pending_approvals(&Caller::new("root", "admin"))
            .await
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn modes_are_a_one_line_setting() {
    let auto = builder().policy_mode(PolicyMode::Auto).build().unwrap();
    assert_eq!(code(&call(&auto, "shutdown", json!({})).await), "ok");
    let deny = builder().policy_mode(PolicyMode::Deny).build().unwrap();
    let outcome = call(&deny, "shutdown", json!({})).await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::Denied);
    assert!(
        outcome
            .error()
            .unwrap()
            .message
            .contains("`shutdown` is critical risk")
    );
    assert_eq!(
        code(&call(&deny, "balance", json!({"account": "a"})).await),
        "ok"
    );
}

#[tokio::test]
async fn a_custom_policy_sees_tool_caller_and_arguments() {
    let policy = |request: &PolicyRequest| match (
        request.tool.name.as_str(),
        request.arguments()["amount"].as_u64(),
    ) {
        ("transfer", Some(amount)) if amount > 100 => Decision::Deny {
            reason: format!("{amount} is over the daily limit"),
        },
        ("transfer", _) => Decision::Allow,
        _ if request.caller.role() == "admin" => Decision::Allow,
        _ if request.tool.group.as_deref() == Some("ops") => Decision::Deny {
            reason: "ops tools are for admins".into(),
        },
        _ => Decision::Allow,
    };
    let registry = builder().policy(policy).build().unwrap();
    assert_eq!(
        code(&call(&registry, "transfer", json!({"amount": 5, "to": "bob"})).await),
        "ok"
    );
    let outcome = call(&registry, "transfer", json!({"amount": 500, "to": "bob"})).await;
    assert_eq!(
        outcome.error().unwrap().message,
        "this call is not allowed: 500 is over the daily limit"
    );
    assert_eq!(
        code(&call(&registry, "shutdown", json!({})).await),
        "denied"
    );
    let admin = registry
        .call(
            &Caller::new("root", "admin"),
            ToolCall::new("1", "shutdown", json!({})),
        )
        .await;
    assert_eq!(code(&admin), "ok");
}

#[tokio::test]
async fn an_in_process_approver_approves_edits_denies_and_approves_always() {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let approver = move |request: ApprovalRequest| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(request.tool.name, "transfer");
            assert!(request.reason.contains("high risk"));
            if request.caller.id() != "alice" {
                return ApprovalAnswer::Deny {
                    reason: "only alice's transfers are pre-cleared".into(),
                };
            }
            match request.arguments["to"].as_str() {
                Some("bob") => ApprovalAnswer::Approve,
                Some("carol") => {
                    ApprovalAnswer::ApproveWithArguments(json!({"amount": 1, "to": "carol"}))
                }
                Some("mallory") => ApprovalAnswer::ApproveWithArguments(
                    json!({"amount": 1_000_000, "to": "mallory"}),
                ),
                Some("dave") => ApprovalAnswer::ApproveAlways,
                _ => ApprovalAnswer::Deny {
                    reason: "unknown recipient".into(),
                },
            }
        }
    };
    let registry = builder().approver("ops-desk", approver).build().unwrap();
    let send = |to: &str| json!({"amount": 50, "to": to});
    assert_eq!(
        call(&registry, "transfer", send("bob"))
            .await
            .result
            .unwrap(),
        "sent 50 to bob"
    );
    assert_eq!(
        call(&registry, "transfer", send("carol"))
            .await
            .result
            .unwrap(),
        "sent 1 to carol"
    );
    let edited = call(&registry, "transfer", send("mallory")).await;
    let error = edited.error().unwrap();
    assert_eq!(error.code, ErrorCode::InvalidArguments);
    assert!(
        error
            .message
            .starts_with("the approver's edited arguments do not match"),
        "{}",
        error.message
    );
    assert_eq!(
        count(&TRANSFERS, "mallory"),
        0,
        "edited arguments that fail validation never run"
    );
    let denied = call(&registry, "transfer", send("eve")).await;
    assert_eq!(denied.error().unwrap().code, ErrorCode::ApprovalDenied);
    assert!(
        denied
            .error()
            .unwrap()
            .message
            .ends_with("unknown recipient")
    );

    assert_eq!(code(&call(&registry, "transfer", send("dave")).await), "ok");
    let asked_before = asked.load(Ordering::SeqCst);
    assert_eq!(
        code(&call(&registry, "transfer", send("zed")).await),
        "ok",
        "always approved for this caller and tool"
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        asked_before,
        "not asked again"
    );
    let other = registry
        .call(
            &Caller::new("bob", "user"),
            ToolCall::new("x", "transfer", send("zed")),
        )
        .await;
    assert_eq!(
        code(&other),
        "approval_denied",
        "another caller is still asked"
    );
}

#[tokio::test]
async fn a_ticket_runs_exactly_that_call_once() {
    let registry = builder().build().unwrap();
    let waiting = call(&registry, "delete_account", json!({"account": "acc-9"})).await;
    assert_eq!(count(&DELETED, "acc-9"), 0, "nothing ran yet");
    let ticket = ticket(&waiting);
    let pending = registry
        .pending_approvals(&Caller::new("root", "admin"))
        .await
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].arguments, json!({"account": "acc-9"}));
    assert_eq!(pending[0].caller.id(), "alice");

    let manager = Caller::new("manager", "admin");
    let outcome = registry.approve(&ticket, &manager).await.unwrap();
    assert_eq!(outcome.call_id, "id-delete_account");
    assert_eq!(outcome.result.unwrap(), "deleted acc-9");
    assert_eq!(count(&DELETED, "acc-9"), 1);
    assert_eq!(
        registry.approve(&ticket, &manager).await.unwrap_err(),
        TicketError::AlreadyUsed
    );
    assert!(
        registry
            .pending_approvals(&Caller::new("root", "admin"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(count(&DELETED, "acc-9"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_redeemed_many_times_at_once_runs_once() {
    let registry = builder().build().unwrap();
    let waiting = call(
        &registry,
        "transfer",
        json!({"amount": 7, "to": "concurrent-bob"}),
    )
    .await;
    let ticket = ticket(&waiting);
    let attempts: Vec<_> = (0..16)
        .map(|i| {
            let (registry, ticket) = (registry.clone(), ticket.clone());
            tokio::spawn(async move {
                registry
                    .approve(&ticket, &Caller::new(format!("approver-{i}"), "admin"))
                    .await
            })
        })
        .collect();
    let mut ran = 0;
    for attempt in attempts {
        match attempt.await.unwrap() {
            Ok(outcome) => {
                assert!(outcome.is_ok());
                ran += 1;
            }
            Err(error) => assert_eq!(error, TicketError::AlreadyUsed),
        }
    }
    assert_eq!(ran, 1);
    assert_eq!(count(&TRANSFERS, "concurrent-bob"), 1);
}

#[tokio::test]
async fn a_panicking_approver_refuses_the_call_and_the_process_goes_on() {
    let approver = |_request: ApprovalRequest| async move {
        panic!("approval service crashed");
    };
    let registry = builder().approver("flaky", approver).build().unwrap();
    let outcome = call(
        &registry,
        "transfer",
        json!({"amount": 5, "to": "panic-bob"}),
    )
    .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::ApprovalDenied);
    assert_eq!(count(&TRANSFERS, "panic-bob"), 0);
    assert_eq!(
        code(&call(&registry, "balance", json!({"account": "a"})).await),
        "ok"
    );
}

#[tokio::test]
async fn forged_expired_and_other_registries_tickets_are_refused() {
    let registry = builder()
        .approval_key(*b"0123456789abcdef0123456789abcdef")
        .build()
        .unwrap();
    let ticket = ticket(&call(&registry, "shutdown", json!({})).await);
    let admin = Caller::new("root", "admin");
    // One character of the signature changed.
    let mut forged = ticket.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(
        registry.approve(&forged, &admin).await.unwrap_err(),
        TicketError::Invalid
    );
    assert_eq!(
        registry.approve("not a ticket", &admin).await.unwrap_err(),
        TicketError::Invalid
    );
    // Another registry (another key) cannot redeem it.
    let other = builder()
        .approval_key(*b"another key, another application")
        .build()
        .unwrap();
    assert_eq!(
        other.approve(&ticket, &admin).await.unwrap_err(),
        TicketError::Invalid
    );
    // The genuine ticket still works after the failed attempts.
    assert!(registry.approve(&ticket, &admin).await.unwrap().is_ok());

    let expiring = builder().ticket_lifetime(Duration::ZERO).build().unwrap();
    let ticket = ticket_of(&expiring).await;
    assert_eq!(
        expiring.approve(&ticket, &admin).await.unwrap_err(),
        TicketError::Expired
    );
}

async fn ticket_of(registry: &Registry) -> String {
    ticket(&call(registry, "shutdown", json!({})).await)
}

/// A store whose pending calls were changed behind the registry's back.
#[derive(Default)]
struct TamperedStore(MemoryPendingStore);

impl PendingStore for TamperedStore {
    fn put(&self, mut call: PendingCall) -> StoreFuture<'_, ()> {
        call.arguments = json!({"amount": 999, "to": "tampered-mallory"});
        self.0.put(call)
    }
    fn take<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        self.0.take(ticket_id)
    }
    fn get<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        self.0.get(ticket_id)
    }
    fn list(&self) -> StoreFuture<'_, Vec<PendingCall>> {
        self.0.list()
    }
    fn put_decided<'a>(&'a self, ticket_id: &'a str, decided: DecidedCall) -> StoreFuture<'a, ()> {
        self.0.put_decided(ticket_id, decided)
    }
    fn decided<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<DecidedCall>> {
        self.0.decided(ticket_id)
    }
}

#[tokio::test]
async fn a_ticket_bound_to_other_arguments_runs_nothing() {
    let registry = builder()
        .pending_store(TamperedStore::default())
        .build()
        .unwrap();
    let ticket = ticket(
        &call(
            &registry,
            "transfer",
            json!({"amount": 1, "to": "tampered-bob"}),
        )
        .await,
    );
    let error = registry
        .approve(&ticket, &Caller::new("root", "admin"))
        .await
        .unwrap_err();
    assert_eq!(error, TicketError::Mismatch);
    assert_eq!(
        count(&TRANSFERS, "tampered-bob") + count(&TRANSFERS, "tampered-mallory"),
        0
    );
}

#[tokio::test]
async fn denying_a_ticket_answers_the_model_and_runs_nothing() {
    let registry = builder().build().unwrap();
    let ticket = ticket(&call(&registry, "shutdown", json!({})).await);
    let outcome = registry
        .deny(
            &ticket,
            &Caller::new("root", "admin"),
            "not during business hours",
        )
        .await
        .unwrap();
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::ApprovalDenied);
    assert_eq!(
        error.message,
        "a person refused this call: not during business hours"
    );
    assert_eq!(outcome.call_id, "id-shutdown");
    assert!(
        registry
            .deny(&ticket, &Caller::new("root", "admin"), "again")
            .await
            .is_err()
    );
}

#[tokio::test]
async fn approving_one_call_of_a_batch_leaves_the_others_intact() {
    let registry = builder().build().unwrap();
    let calls = vec![
        ToolCall::new("c1", "balance", json!({"account": "a"})),
        ToolCall::new("c2", "delete_account", json!({"account": "b"})),
        ToolCall::new("c3", "shutdown", json!({})),
        ToolCall::new("c4", "balance", json!({"account": "c"})),
    ];
    let mut outcomes = registry.run_batch(&user(), calls).await;
    let ids: Vec<_> = outcomes.iter().map(|o| o.call_id.clone()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    let codes: Vec<_> = outcomes.iter().map(code).collect();
    assert_eq!(
        codes,
        ["ok", "approval_required", "approval_required", "ok"]
    );
    let admin = Caller::new("root", "admin");
    outcomes[1] = registry
        .approve(&ticket(&outcomes[1]), &admin)
        .await
        .unwrap();
    outcomes[2] = registry
        .deny(&ticket(&outcomes[2]), &admin, "no")
        .await
        .unwrap();
    let codes: Vec<_> = outcomes.iter().map(code).collect();
    assert_eq!(codes, ["ok", "ok", "approval_denied", "ok"]);
    let ids: Vec<_> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
}

#[tokio::test]
async fn a_dry_run_decides_everything_and_runs_nothing() {
    let registry = builder().build().unwrap();
    let calls = vec![
        ToolCall::new("1", "balance", json!({"account": "a"})),
        ToolCall::new("2", "delete_account", json!({"account": "dry-a"})),
        ToolCall::new("3", "transfer", json!({"amount": 5000, "to": "dry-bob"})),
        ToolCall::new("4", "nope", json!({})),
        ToolCall::new("5", "transfer", json!({"amount": 5, "to": "dry-bob"})),
    ];
    let options = BatchOptions {
        dry_run: true,
        ..Default::default()
    };
    let outcomes = registry.run_batch_with(&user(), calls, options).await;
    assert_eq!(
        outcomes[0].result.as_ref().unwrap(),
        &json!({"dry_run": true, "decision": "allow", "reason": null})
    );
    assert_eq!(
        outcomes[1].result.as_ref().unwrap()["decision"],
        "require_approval"
    );
    assert_eq!(
        outcomes[2].error().unwrap().code,
        ErrorCode::InvalidArguments
    );
    assert_eq!(outcomes[3].error().unwrap().code, ErrorCode::UnknownTool);
    assert_eq!(
        outcomes[4].result.as_ref().unwrap()["reason"],
        "`transfer` is high risk and needs a person's approval"
    );
    assert_eq!(count(&DELETED, "dry-a"), 0, "the side effect is absent");
    assert_eq!(count(&TRANSFERS, "dry-bob"), 0);
    assert!(
        registry
            .pending_approvals(&Caller::new("root", "admin"))
            .await
            .unwrap()
            .is_empty(),
        "no ticket is issued by a dry run"
    );
    let single = registry
        .call_with(
            &user(),
            ToolCall::new("6", "delete_account", json!({"account": "dry-z"})),
            CallOptions {
                dry_run: true,
                ..Default::default()
            },
        )
        .await;
    assert_eq!(single.result.unwrap()["decision"], "require_approval");
    assert_eq!(count(&DELETED, "dry-z"), 0);
}

#[tokio::test]
async fn per_caller_and_per_tool_rate_limits() {
    let registry = builder()
        .rate_limit_per_caller(RateLimit::new(3, Duration::from_secs(3600)))
        .rate_limit_tool("rename", RateLimit::new(1, Duration::from_secs(3600)))
        .build()
        .unwrap();
    for _ in 0..3 {
        assert_eq!(
            code(&call(&registry, "balance", json!({"account": "a"})).await),
            "ok"
        );
    }
    let limited = call(&registry, "balance", json!({"account": "a"})).await;
    let error = limited.error().unwrap();
    assert_eq!(error.code, ErrorCode::RateLimited);
    assert!(
        error
            .message
            .starts_with("you are making calls too fast; try again in"),
        "{}",
        error.message
    );
    assert!(
        error.details.as_ref().unwrap()["retry_after_ms"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Another caller has a budget of its own; the tool's budget is shared.
    let bob = Caller::new("bob", "user");
    let rename = |id: &str| ToolCall::new(id, "rename", json!({"account": "a", "name": "b"}));
    assert_eq!(code(&registry.call(&bob, rename("r1")).await), "ok");
    let tool_limited = registry
        .call(&Caller::new("carol", "user"), rename("r2"))
        .await;
    assert_eq!(tool_limited.error().unwrap().code, ErrorCode::RateLimited);
    assert!(
        tool_limited
            .error()
            .unwrap()
            .message
            .starts_with("`rename` is being called too often")
    );
}

#[tokio::test]
async fn an_oversized_batch_runs_nothing_and_answers_every_call() {
    let registry = builder()
        .policy_mode(PolicyMode::Auto)
        .max_batch_size(2)
        .build()
        .unwrap();
    let calls = (0..3)
        .map(|i| {
            ToolCall::new(
                i.to_string(),
                "transfer",
                json!({"amount": 1, "to": "batch-bob"}),
            )
        })
        .collect();
    let outcomes = registry.run_batch(&user(), calls).await;
    assert_eq!(outcomes.len(), 3);
    for outcome in &outcomes {
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::BatchTooLarge);
        assert!(error.message.contains("this batch has 3 calls; at most 2"));
    }
    assert_eq!(count(&TRANSFERS, "batch-bob"), 0);
}

#[tokio::test]
async fn a_tool_limit_counts_every_spelling_of_the_tools_name() {
    for configured in ["ops.ping", "ops_ping"] {
        let schema = json!({"type": "object", "properties": {}});
        let definition =
            toolgate::ToolDefinition::new("ops.ping", "Ping the ops desk.", "user", schema);
        let ping = toolgate::FnTool::new(definition, |_, _| async { Ok(json!("pong")) });
        let registry = builder()
            .linked_tools(false)
            .tool(ping)
            .rate_limit_tool(configured, RateLimit::new(2, Duration::from_secs(3600)))
            .build()
            .unwrap();
        let mut events = registry.events();
        let mut codes = Vec::new();
        for name in ["ops.ping", "ops_ping", "ops_ping", "ops.ping"] {
            let outcome = call(&registry, name, json!({})).await;
            // The caller gets its own spelling back; everything else names the tool.
            assert_eq!(outcome.tool, name);
            codes.push(code(&outcome));
        }
        assert_eq!(
            codes,
            ["ok", "ok", "rate_limited", "rate_limited"],
            "limit set as {configured}"
        );
        let history = registry.history(user().id(), 10).await.unwrap();
        assert_eq!(history.len(), 4);
        assert!(
            history.iter().all(|record| record.tool == "ops.ping"),
            "{history:?}"
        );
        let mut finished = Vec::new();
        while let Ok(event) = events.try_recv() {
            if let toolgate::events::EventKind::CallFinished { tool, .. } = &event.kind {
                finished.push(tool.clone());
            }
        }
        assert_eq!(finished, ["ops.ping"; 4]);
    }
}
