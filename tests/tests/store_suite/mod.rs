//! One suite for every database store: each scenario opens the stores again for each
//! "instance" (a new connection, as another process or a restarted one would), so what holds
//! across instances is what the database holds, not what one process remembers.

mod events;
mod usage;

pub use events::*;
pub use usage::*;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolgate::agent::{Agent, Model, ModelFuture, ModelReply, ModelRequest};
use toolgate::approval::{ApprovalAnswer, ApprovalRequest, TicketError};
use toolgate::audit::{AuditMode, ChainBreak};
use toolgate::budget::Budget;
use toolgate::prelude::*;
use toolgate::rate_limits::RateLimit;
use toolgate::store::{StoreError, Stores};

/// Opens the stores of one database, as a new instance would.
pub type Open = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Stores> + Send>> + Send + Sync>;
/// Counts rows with SQL (`SELECT count(*) ...`), behind the stores' back.
pub type Count =
    Arc<dyn Fn(&'static str) -> Pin<Box<dyn Future<Output = i64> + Send>> + Send + Sync>;
/// Runs SQL on the database behind the stores' back (to tamper with it).
pub type Tamper =
    Arc<dyn Fn(&'static str) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

const DAY: Duration = Duration::from_secs(86_400);

const KEY: &[u8] = b"one key for every instance of the application";

/// What `wipe` did, by target: scenarios run in parallel, each with its own targets.
static WIPED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn wiped(target: &str) -> usize {
    WIPED
        .lock()
        .unwrap()
        .iter()
        .filter(|t| *t == target)
        .count()
}

/// Wipe a disk.
#[tool(permission = "user", destructive)]
fn wipe(target: String) -> String {
    WIPED.lock().unwrap().push(target.clone());
    format!("wiped {target}")
}

/// Answer.
#[tool(permission = "user", read_only)]
fn ping(note: String) -> String {
    note
}

/// The chain's scenarios count one record per call: the mode that writes one.
fn builder(stores: &Stores) -> toolgate::RegistryBuilder {
    Registry::builder()
        .roles(["user", "admin"])
        .expect_tools(["wipe", "ping"])
        .stores(stores)
        .audit_mode(AuditMode::AfterCall)
        .approval_key(KEY)
}

pub async fn instance(open: &Open) -> Registry {
    builder(&open().await).build().unwrap()
}

pub fn alice() -> Caller {
    Caller::new("alice", "user")
}

fn admin() -> Caller {
    Caller::new("root", "admin")
}

async fn ticket_for(registry: &Registry, target: &str) -> String {
    let outcome = registry
        .call(
            &alice(),
            ToolCall::new("c1", "wipe", json!({"target": target})),
        )
        .await;
    let error = outcome.result.unwrap_err();
    assert_eq!(error.code, ErrorCode::ApprovalRequired, "{error:?}");
    error.details.unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A ticket issued before a restart is redeemed after it, once; the waiting call is listed
/// by the new instance.
pub async fn tickets_survive_a_restart_and_redeem_once(open: Open) {
    let before = instance(&open).await;
    let ticket = ticket_for(&before, "restart-disk").await;
    drop(before);

    let after = instance(&open).await;
    let waiting = after.pending_approvals(&admin()).await.unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].tool, "wipe");
    assert_eq!(waiting[0].caller.role(), "user", "the whole caller is kept");
    let outcome = after.approve(&ticket, &admin()).await.unwrap();
    assert_eq!(outcome.result.unwrap(), json!("wiped restart-disk"));
    assert_eq!(wiped("restart-disk"), 1);
    assert_eq!(
        after.approve(&ticket, &admin()).await.unwrap_err(),
        TicketError::AlreadyUsed
    );
    assert!(after.pending_approvals(&admin()).await.unwrap().is_empty());
}

/// A waiting call expires with its ticket: no longer listed nor redeemable, and its row is
/// removed when the next call comes to wait.
pub async fn expired_calls_are_refused_and_cleaned_up(open: Open, count: Count) {
    let registry = builder(&open().await)
        .ticket_lifetime(Duration::from_secs(1))
        .build()
        .unwrap();
    let ticket = ticket_for(&registry, "expiring-disk").await;
    assert_eq!(count("SELECT count(*) FROM toolgate_pending").await, 1);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert!(
        registry
            .pending_approvals(&admin())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        registry.approve(&ticket, &admin()).await.unwrap_err(),
        TicketError::Expired
    );
    ticket_for(&registry, "next-disk").await;
    assert_eq!(
        count("SELECT count(*) FROM toolgate_pending").await,
        1,
        "the expired row went"
    );
    assert_eq!(wiped("expiring-disk"), 0);
}

/// Fifty redemptions of one ticket at once, spread over two instances: one runs it.
pub async fn concurrent_redemptions_across_instances_run_once(open: Open) {
    let (a, b) = (instance(&open).await, instance(&open).await);
    let ticket = ticket_for(&a, "raced-disk").await;
    let attempts = (0..50).map(|index| {
        let registry = if index % 2 == 0 { a.clone() } else { b.clone() };
        let ticket = ticket.clone();
        tokio::spawn(async move { registry.approve(&ticket, &admin()).await })
    });
    let results = futures::future::join_all(attempts).await;
    let ran = results
        .into_iter()
        .map(Result::unwrap)
        .filter(|result| match result {
            Ok(outcome) => outcome.result.is_ok(),
            Err(error) => {
                assert_eq!(*error, TicketError::AlreadyUsed);
                false
            }
        })
        .count();
    assert_eq!(ran, 1);
    assert_eq!(wiped("raced-disk"), 1);
}

/// "Always" holds after a restart, on another instance, until revoked.
pub async fn grants_survive_a_restart(open: Open) {
    let always = |_: ApprovalRequest| async { ApprovalAnswer::ApproveAlways };
    let first = builder(&open().await)
        .approver("lead", always)
        .build()
        .unwrap();
    let call = ToolCall::new("g1", "wipe", json!({"target": "granted-disk"}));
    assert!(first.call(&alice(), call.clone()).await.result.is_ok());
    drop(first);

    let asked = Arc::new(AtomicUsize::new(0));
    let counting = {
        let asked = Arc::clone(&asked);
        move |_: ApprovalRequest| {
            asked.fetch_add(1, Ordering::SeqCst);
            async {
                ApprovalAnswer::Deny {
                    reason: "asked again".into(),
                }
            }
        }
    };
    let second = builder(&open().await)
        .approver("lead", counting)
        .build()
        .unwrap();
    assert!(second.call(&alice(), call.clone()).await.result.is_ok());
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the grant held");
    let grants = second.grants().await.unwrap();
    assert_eq!(
        (grants[0].caller.as_str(), grants[0].tool.as_str()),
        ("alice", "wipe")
    );
    assert_eq!(grants[0].granted_by.as_deref(), Some("lead"));
    let history = second.history("alice", 1).await.unwrap();
    assert_eq!(history[0].decision, "approved_always");

    assert!(second.revoke_grant("alice", "wipe").await.unwrap());
    let refused = second.call(&alice(), call).await.result.unwrap_err();
    assert_eq!(refused.code, ErrorCode::ApprovalDenied);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(wiped("granted-disk"), 2);
}

/// One per-caller budget, whichever instance is asked.
pub async fn one_rate_limit_across_instances(open: Open) {
    let limited = |stores: Stores| {
        builder(&stores)
            .rate_limit_per_caller(RateLimit::new(5, Duration::from_secs(3600)))
            .build()
            .unwrap()
    };
    let (a, b) = (limited(open().await), limited(open().await));
    let mut allowed = 0;
    let mut waits = Vec::new();
    for index in 0..12 {
        let registry = if index % 2 == 0 { &a } else { &b };
        let call = ToolCall::new(format!("r{index}"), "ping", json!({"note": "hi"}));
        match registry.call(&alice(), call).await.result {
            Ok(_) => allowed += 1,
            Err(error) => {
                assert_eq!(error.code, ErrorCode::RateLimited);
                waits.push(error.details.unwrap()["retry_after_ms"].as_u64().unwrap());
            }
        }
    }
    assert_eq!(allowed, 5);
    // The next call comes back after one interval (12 minutes), less the time spent.
    assert!(
        waits.iter().all(|wait| (600_000..=720_000).contains(wait)),
        "{waits:?}"
    );
    // Another caller has a budget of its own.
    let bob = Caller::new("bob", "user");
    let call = ToolCall::new("b", "ping", json!({"note": "hi"}));
    assert!(a.call(&bob, call).await.result.is_ok());
}

/// `count` calls spread over two instances at once: as many records, one verified chain,
/// and each caller's history from it.
pub async fn the_audit_chain_holds_across_instances(open: Open, count: usize) {
    let (a, b) = (instance(&open).await, instance(&open).await);
    let calls = (0..count).map(|index| {
        let registry = if index % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move {
            let caller = Caller::new(format!("caller-{}", index % 3), "user");
            let call = ToolCall::new(
                format!("a{index}"),
                "ping",
                json!({"note": index.to_string()}),
            );
            registry.call(&caller, call).await
        })
    });
    for outcome in futures::future::join_all(calls).await {
        assert!(outcome.unwrap().result.is_ok());
    }
    let chain = b.verify_audit().await.unwrap().unwrap();
    assert_eq!(chain.records, count as u64);
    assert_eq!(chain.last_hash.as_ref().map(String::len), Some(64));
    let history = a.history("caller-1", count).await.unwrap();
    assert_eq!(history.len(), count / 3 + usize::from(count % 3 > 1));
    assert!(history.iter().all(|record| record.caller == "caller-1"));
    assert!(history.iter().all(|record| record.outcome == "ok"));
    let mut ids: Vec<&str> = history
        .iter()
        .map(|record| record.call_id.as_str())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), history.len(), "no record twice");
}

/// An altered, removed or cut-off record is found, and named.
pub async fn tampering_with_the_audit_chain_is_detected(open: Open, tamper: Tamper) {
    let registry = instance(&open).await;
    for index in 0..6 {
        let call = ToolCall::new(format!("t{index}"), "ping", json!({"note": "original"}));
        assert!(registry.call(&alice(), call).await.result.is_ok());
    }
    assert_eq!(registry.verify_audit().await.unwrap().unwrap().records, 6);

    tamper("UPDATE toolgate_audit SET body = replace(body, 'original', 'forged') WHERE seq = 2")
        .await;
    assert_eq!(broken(&registry).await, ChainBreak::Altered { seq: 2 });
    tamper("UPDATE toolgate_audit SET body = replace(body, 'forged', 'original') WHERE seq = 2")
        .await;
    tamper("UPDATE toolgate_audit SET caller = 'mallory' WHERE seq = 3").await;
    assert_eq!(broken(&registry).await, ChainBreak::Altered { seq: 3 });
    tamper("UPDATE toolgate_audit SET caller = 'alice' WHERE seq = 3").await;
    assert_eq!(registry.verify_audit().await.unwrap().unwrap().records, 6);

    tamper("DELETE FROM toolgate_audit WHERE seq = 5").await;
    assert_eq!(
        broken(&registry).await,
        ChainBreak::CutOff {
            expected: 6,
            found: 5
        }
    );
    tamper("DELETE FROM toolgate_audit WHERE seq = 1").await;
    assert_eq!(broken(&registry).await, ChainBreak::Removed { seq: 2 });
}

async fn broken(registry: &Registry) -> ChainBreak {
    registry.verify_audit().await.unwrap().unwrap_err()
}

/// A database set up by a newer toolgate is refused, with both versions named.
pub async fn a_newer_schema_is_refused(
    open_result: impl Future<Output = Result<Stores, StoreError>>,
    tamper: Tamper,
) {
    tamper("UPDATE toolgate_schema SET version = 99").await;
    let error = open_result.await.unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::NewerSchema {
                found: 99,
                supported: 4,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("schema version 99"), "{error}");
}

/// By default a database's audit keeps a record of each call before it runs, and one when
/// it ends.
pub async fn by_default_each_call_is_recorded_before_it_runs(open: Open) {
    let registry = Registry::builder()
        .roles(["user", "admin"])
        .expect_tools(["wipe", "ping"])
        .stores(&open().await)
        .build()
        .unwrap();
    let call = ToolCall::new("d1", "ping", json!({"note": "first"}));
    let caller = Caller::new("dora", "user");
    assert!(registry.call(&caller, call).await.result.is_ok());
    let history = registry.history("dora", 10).await.unwrap();
    let outcomes: Vec<&str> = history
        .iter()
        .map(|record| record.outcome.as_str())
        .collect();
    assert_eq!(outcomes, ["ok", "started"], "newest first");
}

/// A caller id no store can keep as it is (NUL, a line break, other control characters) is
/// refused everything, the same way on every store, and its refusal is recorded with the
/// id escaped; it cannot decide waiting calls either.
pub async fn a_caller_id_no_store_can_keep_is_refused_and_recorded(open: Open) {
    let registry = instance(&open).await;
    for (id, escaped) in [
        ("ada\0", "ada\\0"),
        ("eve\nforged line", "eve\\nforged line"),
        ("\u{7}bell", "\\u{7}bell"),
    ] {
        let caller = Caller::new(id, "user");
        assert!(registry.visible_to(&caller).is_empty());
        let call = ToolCall::new("n1", "wipe", json!({"target": id}));
        let error = registry.call(&caller, call).await.result.unwrap_err();
        assert_eq!(error.code, ErrorCode::UnknownTool, "{error:?}");
        assert_eq!(wiped(id), 0);
        let history = registry.history(escaped, 10).await.unwrap();
        assert_eq!(history.len(), 1, "the refusal of {id:?} is recorded");
        assert_eq!(history[0].caller, escaped);
    }
    let ticket = ticket_for(&registry, "nul-approver").await;
    let approver = Caller::new("root\0", "admin");
    assert!(registry.approve(&ticket, &approver).await.is_err());
    assert!(
        registry
            .pending_approvals(&approver)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(wiped("nul-approver"), 0);
    assert!(registry.verify_audit().await.unwrap().is_ok());
}

/// Sign-in sessions: what one instance keeps, another reads; an expired one is gone; one
/// taken by fifty requests at once across two instances is taken once.
pub async fn sessions_are_shared_by_instances_and_taken_once(open: Open) {
    let (a, b) = (open().await, open().await);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    a.sessions
        .put("session:kept".into(), "claims".into(), now + 60_000)
        .await
        .unwrap();
    assert_eq!(
        b.sessions.get("session:kept").await.unwrap().as_deref(),
        Some("claims")
    );
    a.sessions
        .put("session:old".into(), "stale".into(), now - 1)
        .await
        .unwrap();
    assert_eq!(b.sessions.get("session:old").await.unwrap(), None);
    assert_eq!(b.sessions.take("session:old").await.unwrap(), None);

    a.sessions
        .put("sign-in:raced".into(), "verifier".into(), now + 60_000)
        .await
        .unwrap();
    let takes = (0..50).map(|index| {
        let stores = if index % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move { stores.sessions.take("sign-in:raced").await.unwrap() })
    });
    let taken: Vec<Option<String>> = futures::future::join_all(takes)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(taken.iter().flatten().count(), 1, "{taken:?}");
    assert_eq!(a.sessions.get("sign-in:raced").await.unwrap(), None);
    // Ending a session is seen by every instance.
    assert_eq!(
        b.sessions.take("session:kept").await.unwrap().as_deref(),
        Some("claims")
    );
    assert_eq!(a.sessions.get("session:kept").await.unwrap(), None);
}

/// A database made by the toolgate before sessions (schema version 1) is brought up to date
/// when opened: its state stays, and sessions can be kept.
pub async fn a_version_one_database_is_migrated(open: Open, tamper: Tamper) {
    let registry = instance(&open).await;
    let ticket = ticket_for(&registry, "kept-over-the-upgrade").await;
    tamper("DROP TABLE toolgate_sessions; DROP TABLE toolgate_budgets; DROP TABLE toolgate_events; DROP TABLE toolgate_event_followers; UPDATE toolgate_schema SET version = 1").await;
    let upgraded = open().await;
    let until = u64::MAX / 2;
    upgraded
        .sessions
        .put("session:after".into(), "claims".into(), until)
        .await
        .unwrap();
    assert_eq!(
        upgraded
            .sessions
            .get("session:after")
            .await
            .unwrap()
            .as_deref(),
        Some("claims")
    );
    let reopened = instance(&open).await;
    assert!(
        reopened
            .approve(&ticket, &admin())
            .await
            .unwrap()
            .result
            .is_ok()
    );
}

/// Parallel calls on two instances race for the last units of one caller's daily tool-call
/// budget: exactly as many run as it holds; every other call ends `budget_exhausted`, and is
/// recorded so.
pub async fn one_call_budget_across_instances(open: Open) {
    let budgeted = |stores: Stores| {
        builder(&stores)
            .budget(Budget::tool_calls(3).per_caller(DAY))
            .build()
            .unwrap()
    };
    let (a, b) = (budgeted(open().await), budgeted(open().await));
    let racing = (0..30).map(|index| {
        let registry = if index % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move {
            let call = ToolCall::new(format!("r{index}"), "ping", json!({"note": "hi"}));
            registry.call(&alice(), call).await.result
        })
    });
    let results = futures::future::join_all(racing).await;
    let mut passed = 0;
    for result in results {
        match result.unwrap() {
            Ok(_) => passed += 1,
            Err(error) => assert_eq!(error.code, ErrorCode::BudgetExhausted, "{error:?}"),
        }
    }
    assert_eq!(passed, 3);
    let history = a.history("alice", 100).await.unwrap();
    let refused = history
        .iter()
        .filter(|record| record.outcome == "budget_exhausted")
        .count();
    assert_eq!(refused, 27);
    // Another caller has a budget of its own.
    let bob = Caller::new("bob", "user");
    let call = ToolCall::new("b", "ping", json!({"note": "hi"}));
    assert!(b.call(&bob, call).await.result.is_ok());
}

/// A model that answers every request with text, having used `tokens` input tokens.
struct Spends(u64);

impl Model for Spends {
    fn respond<'a>(&'a self, _request: ModelRequest<'a>) -> ModelFuture<'a> {
        let mut reply = ModelReply {
            text: Some("done".into()),
            ..ModelReply::default()
        };
        reply.usage.input_tokens = self.0;
        Box::pin(async move {
            // Long enough for the other instance's request to come in meanwhile.
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(reply)
        })
    }
}

/// A caller's daily token budget is one count for agents on two instances: with one token
/// left, of two runs started at once, one on each, exactly one is answered.
pub async fn one_token_budget_across_instances(open: Open) {
    let agent = |stores: Stores, spends: u64| {
        let registry = builder(&stores)
            .budget(Budget::tokens(1_000).per_caller(DAY))
            .build()
            .unwrap();
        Agent::builder(registry, Spends(spends)).build()
    };
    let first = agent(open().await, 999);
    let run = first.run(&alice(), "spend").await.unwrap();
    assert_eq!(run.text(), Some("done"), "{:?}", run.status());
    let (a, b) = (agent(open().await, 10), agent(open().await, 10));
    let caller = alice();
    let (on_a, on_b) = tokio::join!(a.run(&caller, "one"), b.run(&caller, "two"));
    let statuses = [on_a.unwrap(), on_b.unwrap()].map(|run| run.status().name());
    let answered = statuses
        .iter()
        .filter(|status| **status == "finished")
        .count();
    let stopped = statuses
        .iter()
        .filter(|status| **status == "budget_exhausted")
        .count();
    assert_eq!((answered, stopped), (1, 1), "{statuses:?}");
}
