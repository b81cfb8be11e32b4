//! The application's own stages on the call's path: every entry point walks them (a single
//! call, a batch, a call resumed by ticket, an in-process or client approval, HTTP, MCP, the
//! agent loop); a stage may refuse, require approval, rewrite the arguments (checked against
//! the schema again), redact a result before anyone sees it, wrap the whole call or hide a
//! tool; a panicking stage is contained; several run in the order they were added.

mod agent;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, header};
use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use toolgate::agent::{Agent, ModelReply, ModelStage, ModelTurn, RunStatus, TurnVerdict};
use toolgate::approval::{
    ApprovalAnswer, ApprovalRequest, AskCaller, CONFIRMATION_KEY, Confirmation,
};
use toolgate::events::EventKind;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::input::InputRequired;
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
use toolgate::stage::{
    CallStage, CallWrapper, ListingStage, ResultCall, ResultStage, StageCall, StageVerdict,
    WrappedCall,
};
use toolgate::{ToolDefinition, ToolResult};
use toolgate_tests::connect_in_memory;
use tower::ServiceExt;

/// Every text `note` ran with (tests run side by side: each looks for texts of its own).
static NOTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn noted(text: &str) -> bool {
    NOTED.lock().unwrap().iter().any(|noted| noted == text)
}

/// Keep a short note.
#[tool(permission = "user", read_only)]
fn note(
    /// The note.
    #[schemars(length(max = 20))]
    text: String,
) -> String {
    NOTED.lock().unwrap().push(text.clone());
    format!("noted: {text}")
}

/// Sign in; answers with the session's key.
#[tool(permission = "user")]
fn sign_in(
    /// Who signs in.
    user: String,
    /// Their password.
    #[secret]
    password: String,
) -> String {
    format!(
        "{user} signed in with a password of {} letters; key sk-live-{user}42",
        password.len()
    )
}

/// Echo a text after waiting a moment (its result comes after the first poll).
#[tool(permission = "user", read_only)]
async fn slow_echo(
    /// What to echo.
    text: String,
) -> String {
    tokio::time::sleep(Duration::from_millis(5)).await;
    format!("echo: {text} sk-live-slow7")
}

/// Read the admin's report.
#[tool(permission = "admin", read_only)]
fn admin_report() -> &'static str {
    "all well"
}

type Log = Arc<Mutex<Vec<String>>>;

fn log_of(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A call stage made of a closure, logging `name:call_id` for every call it sees.
struct Step<F> {
    name: &'static str,
    log: Log,
    decide: F,
    secrets: bool,
}

impl<F: Fn(&StageCall<'_>) -> StageVerdict + Send + Sync + 'static> CallStage for Step<F> {
    fn name(&self) -> &str {
        self.name
    }
    fn check(&self, call: &StageCall<'_>) -> StageVerdict {
        let seen = format!("{}:{}:{}", self.name, call.call_id, call.arguments());
        self.log.lock().unwrap().push(seen);
        (self.decide)(call)
    }
    fn needs_secrets(&self) -> bool {
        self.secrets
    }
}

fn step<F>(name: &'static str, log: &Log, decide: F) -> Step<F>
where
    F: Fn(&StageCall<'_>) -> StageVerdict + Send + Sync + 'static,
{
    Step {
        name,
        log: Arc::clone(log),
        decide,
        secrets: false,
    }
}

fn passes(_: &StageCall<'_>) -> StageVerdict {
    StageVerdict::Continue
}

/// Replaces every `sk-live-…` key in a result's text with `[key removed]`.
struct RedactKeys {
    log: Log,
}

impl ResultStage for RedactKeys {
    fn name(&self) -> &str {
        "redact_keys"
    }
    fn check(&self, call: &ResultCall<'_>, result: ToolResult) -> ToolResult {
        self.log
            .lock()
            .unwrap()
            .push(format!("redact_keys:{}", call.call_id));
        result.map(|value| match value {
            Value::String(text) => Value::String(without_keys(&text)),
            other => other,
        })
    }
}

fn without_keys(text: &str) -> String {
    text.split(' ')
        .map(|word| match word.starts_with("sk-live-") {
            true => "[key removed]",
            false => word,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn user() -> Caller {
    Caller::new("ana", "user")
}

fn admin() -> Caller {
    Caller::new("root", "admin")
}

fn builder() -> toolgate::RegistryBuilder {
    Registry::builder().roles(["user", "admin"])
}

fn error_code(outcome: &ToolOutcome) -> Option<ErrorCode> {
    outcome.error().map(|error| error.code.clone())
}

/// `POST /tools/call` with `body`, as `user()`: the answer's text.
async fn over_http(registry: &Registry, body: Value) -> String {
    post_as(registry, user(), "/tools/call", body).await
}

/// `POST path` with `body`, as `caller`: the answer's text.
async fn post_as(registry: &Registry, caller: Caller, path: &str, body: Value) -> String {
    let authenticate =
        move |_: &axum::http::request::Parts| -> Result<Caller, AuthError> { Ok(caller.clone()) };
    let app = router(registry.clone(), authenticate, HttpOptions::default());
    let request = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

async fn decisions(registry: &Registry, caller: &str) -> Vec<(String, String)> {
    let records = registry.history(caller, 100).await.unwrap();
    records
        .into_iter()
        .map(|record| (record.call_id, record.decision))
        .collect()
}

#[tokio::test]
async fn a_call_stage_sees_single_calls_batches_http_mcp_and_agent_turns() {
    let log = Log::default();
    let registry = builder()
        .call_stage(step("watch", &log, passes))
        .build()
        .unwrap();
    // A single call.
    let outcome = registry
        .call(
            &user(),
            ToolCall::new("single", "note", json!({"text": "a"})),
        )
        .await;
    assert_eq!(outcome.result.unwrap(), "noted: a");
    // A batch.
    let batch = vec![
        ToolCall::new("batch-1", "note", json!({"text": "b"})),
        ToolCall::new("batch-2", "slow_echo", json!({"text": "c"})),
    ];
    let outcomes = registry.run_batch(&user(), batch).await;
    assert!(outcomes.iter().all(ToolOutcome::is_ok), "{outcomes:?}");
    // HTTP.
    let body = json!({"id": "http", "name": "note", "arguments": {"text": "d"}});
    assert!(over_http(&registry, body).await.contains("noted: d"));
    // MCP.
    let client = connect_in_memory(McpServer::for_caller(registry.clone(), user()), ()).await;
    let arguments = json!({"text": "e"}).as_object().unwrap().clone();
    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new("note").with_arguments(arguments))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");

    let seen = log_of(&log);
    for (id, text) in [
        ("single", "a"),
        ("batch-1", "b"),
        ("batch-2", "c"),
        ("http", "d"),
    ] {
        let expected = format!("watch:{id}:{}", json!({"text": text}));
        assert!(seen.contains(&expected), "{expected} not in {seen:?}");
    }
    assert!(
        seen.iter()
            .any(|line| line.ends_with(&format!(":{}", json!({"text": "e"})))),
        "the MCP call: {seen:?}"
    );
}

#[tokio::test]
async fn an_agent_turn_walks_the_stages() {
    let ran = agent::Ran::default();
    let log = Log::default();
    let refuse_transfers = |call: &StageCall<'_>| match call.tool.name.as_str() {
        "transfer" => StageVerdict::Refuse(ToolError::new(ErrorCode::Denied, "no transfers today")),
        _ => StageVerdict::Continue,
    };
    let registry = agent::builder(&ran)
        .call_stage(step("agent_watch", &log, refuse_transfers))
        .build()
        .unwrap();
    let model = agent::Scripted::new([
        agent::calls(&[
            ("c1", "lookup_pet", r#"{"name": "Rex"}"#),
            ("c2", "transfer", r#"{"amount": 5, "to": "bob"}"#),
        ]),
        agent::text("done"),
    ]);
    let run = Agent::builder(registry, model.clone())
        .build()
        .run(&Caller::new("cust-1", "customer"), "go")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("done"));
    assert_eq!(ran.transfers(), 0, "the refused transfer did not run");
    let results = agent::last_results(&model.seen()[1]);
    assert!(results[0].1.is_ok());
    let refused = results[1].1.as_ref().unwrap_err();
    assert_eq!(
        (refused.code.clone(), refused.message.as_str()),
        (ErrorCode::Denied, "no transfers today")
    );
    let seen = log_of(&log);
    assert!(
        seen.iter().any(|line| line.starts_with("agent_watch:c1:")),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|line| line.starts_with("agent_watch:c2:")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_refusal_is_the_stages_own_error_and_the_record_names_the_stage() {
    let log = Log::default();
    let refuse = |call: &StageCall<'_>| match call.arguments()["text"].as_str() {
        Some(text) if text.contains("4111") => StageVerdict::Refuse(
            ToolError::new(ErrorCode::Denied, "card numbers may not be noted")
                .with_details(json!({"rule": "pci"})),
        ),
        _ => StageVerdict::Continue,
    };
    let registry = builder()
        .call_stage(step("no_cards", &log, refuse))
        .build()
        .unwrap();
    let caller = Caller::new("refused-caller", "user");
    for (id, path) in [("plain", 0), ("full", 1)] {
        let call = ToolCall::new(id, "note", json!({"text": "4111 1111"}));
        let outcome = match path {
            0 => registry.call(&caller, call).await,
            _ => {
                let options = CallOptions {
                    cancel: Some(CancellationToken::new()),
                    ..CallOptions::default()
                };
                registry.call_with(&caller, call, options).await
            }
        };
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::Denied);
        assert_eq!(error.message, "card numbers may not be noted");
        assert_eq!(error.details, Some(json!({"rule": "pci"})));
    }
    assert!(!noted("4111 1111"), "the tool never ran");
    let records = decisions(&registry, "refused-caller").await;
    assert_eq!(records.len(), 2, "{records:?}");
    for (_, decision) in &records {
        assert_eq!(
            decision,
            "refused_by_stage (stages: no_cards: refused the call)"
        );
    }
    // A dry run reports what the stage would do.
    let options = CallOptions {
        dry_run: true,
        ..CallOptions::default()
    };
    let call = ToolCall::new("dry", "note", json!({"text": "4111"}));
    let report = registry
        .call_with(&caller, call, options)
        .await
        .result
        .unwrap();
    assert_eq!(report["decision"], "deny");
    assert_eq!(report["reason"], "card numbers may not be noted");
}

fn needs_approval(call: &StageCall<'_>) -> StageVerdict {
    match call.tool.name.as_str() {
        "note" => StageVerdict::RequireApproval {
            reason: "notes are reviewed today".into(),
        },
        _ => StageVerdict::Continue,
    }
}

#[tokio::test]
async fn a_stage_that_requires_approval_waits_for_a_ticket_and_runs_once_approved() {
    let log = Log::default();
    let wrapped = Log::default();
    let registry = builder()
        .call_stage(step("review", &log, needs_approval))
        .wrap_calls(Timing {
            log: Arc::clone(&wrapped),
        })
        .build()
        .unwrap();
    let waiting = registry
        .call(&user(), ToolCall::new("t1", "note", json!({"text": "hi"})))
        .await;
    let error = waiting.error().unwrap();
    assert_eq!(error.code, ErrorCode::ApprovalRequired, "{error:?}");
    assert!(
        error.message.contains("notes are reviewed today"),
        "{}",
        error.message
    );
    let ticket = error.details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let pending = registry.pending_approvals(&admin()).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].reason, "notes are reviewed today");
    // Resumed by ticket: it runs, and the resumed part is wrapped as the call was.
    let outcome = registry.approve(&ticket, &admin()).await.unwrap();
    assert_eq!(outcome.result.unwrap(), "noted: hi");
    assert_eq!(log_of(&wrapped), ["t1 approval_required", "t1 ok"]);
}

#[tokio::test]
async fn a_stage_that_requires_approval_asks_the_in_process_approver_or_the_callers_client() {
    let log = Log::default();
    let asked = Log::default();
    let heard = Arc::clone(&asked);
    let approver = move |request: ApprovalRequest| {
        heard.lock().unwrap().push(request.reason.clone());
        async { ApprovalAnswer::Approve }
    };
    let registry = builder()
        .call_stage(step("review", &log, needs_approval))
        .approver("desk", approver)
        .build()
        .unwrap();
    let outcome = registry
        .call(&user(), ToolCall::new("a1", "note", json!({"text": "x"})))
        .await;
    assert_eq!(outcome.result.unwrap(), "noted: x");
    assert_eq!(log_of(&asked), ["notes are reviewed today"]);
    let records = decisions(&registry, "ana").await;
    assert_eq!(records[0].1, "approved (stages: review: required approval)");

    // The caller's own client decides (as MCP's elicitation does), where its role may.
    let registry = builder()
        .call_stage(step("review", &log, needs_approval))
        .build()
        .unwrap();
    let client_asked = Log::default();
    let heard = Arc::clone(&client_asked);
    let client = move |request: ApprovalRequest| {
        heard.lock().unwrap().push(request.tool.name.clone());
        async {
            ApprovalAnswer::Deny {
                reason: "not now".into(),
            }
        }
    };
    let options = CallOptions {
        ask_caller: Some(AskCaller::Now {
            name: "client".into(),
            approver: Arc::new(client),
        }),
        ..CallOptions::default()
    };
    let call = ToolCall::new("a2", "note", json!({"text": "y"}));
    let outcome = registry.call_with(&admin(), call, options).await;
    assert_eq!(
        error_code(&outcome),
        Some(ErrorCode::ApprovalDenied),
        "{outcome:?}"
    );
    assert_eq!(log_of(&client_asked), ["note"]);

    // A client that asks and calls again (MCP 2026-07-28's requestState): the form first,
    // then the call made again with the person's answer runs once.
    let later = |confirmation| CallOptions {
        ask_caller: Some(AskCaller::Later(confirmation)),
        ..CallOptions::default()
    };
    let call = || ToolCall::new("a3", "note", json!({"text": "z"}));
    let first = registry.call_with(&admin(), call(), later(None)).await;
    let error = first.error().unwrap();
    assert_eq!(error.code, ErrorCode::InputRequired, "{error:?}");
    let asked = InputRequired::from_error(error).unwrap();
    assert!(
        asked.requests[CONFIRMATION_KEY]
            .params
            .to_string()
            .contains("notes are reviewed today")
    );
    let confirmation = Confirmation {
        ticket: asked.ticket.unwrap(),
        answer: Some(ApprovalAnswer::Approve),
    };
    let again = registry
        .call_with(&admin(), call(), later(Some(confirmation)))
        .await;
    assert_eq!(again.result.unwrap(), "noted: z");
}

#[tokio::test]
async fn rewritten_arguments_are_checked_against_the_schema_again() {
    let log = Log::default();
    let shout = |call: &StageCall<'_>| {
        let text = call.arguments()["text"].as_str().unwrap_or_default();
        StageVerdict::Rewrite(json!({"text": text.repeat(3)}))
    };
    let registry = builder()
        .call_stage(step("triple", &log, shout))
        .build()
        .unwrap();
    let caller = Caller::new("rewrite-caller", "user");
    let outcome = registry
        .call(&caller, ToolCall::new("ok", "note", json!({"text": "ab"})))
        .await;
    assert_eq!(outcome.result.unwrap(), "noted: ababab");
    // Tripled past the schema's 20 characters: refused, never run.
    let outcome = registry
        .call(
            &caller,
            ToolCall::new("long", "note", json!({"text": "12345678"})),
        )
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::Denied);
    assert!(!noted("123456781234567812345678"));
    assert!(
        error.message.contains("the stage `triple` rewrote"),
        "{}",
        error.message
    );
    // Into something that is not even an object: refused too.
    let registry = builder()
        .call_stage(step("break", &log, |_: &StageCall<'_>| {
            StageVerdict::Rewrite(json!([1]))
        }))
        .build()
        .unwrap();
    let outcome = registry
        .call(
            &caller,
            ToolCall::new("array", "note", json!({"text": "array-only"})),
        )
        .await;
    assert_eq!(error_code(&outcome), Some(ErrorCode::Denied));
    assert!(!noted("array-only"));
}

#[tokio::test]
async fn stages_see_secrets_redacted_unless_they_need_them_and_a_rewrite_keeps_them() {
    let log = Log::default();
    let rename = |call: &StageCall<'_>| {
        let mut arguments = call.arguments().clone();
        arguments["user"] = json!("bob");
        StageVerdict::Rewrite(arguments)
    };
    let registry = builder()
        .call_stage(step("rename", &log, rename))
        .build()
        .unwrap();
    let caller = Caller::new("secret-caller", "user");
    let call = ToolCall::new(
        "s1",
        "sign_in",
        json!({"user": "ana", "password": "hunter22"}),
    );
    let outcome = registry.call(&caller, call).await;
    // The tool ran with the rewritten user and the caller's own password (8 letters).
    assert_eq!(
        outcome.result.unwrap(),
        "bob signed in with a password of 8 letters; key sk-live-bob42"
    );
    let seen = log_of(&log);
    assert!(
        !seen.iter().any(|line| line.contains("hunter22")),
        "{seen:?}"
    );
    assert!(seen[0].contains("[redacted]"), "{seen:?}");
    // The record keeps the arguments it ran with, secrets redacted.
    let records = registry.history("secret-caller", 10).await.unwrap();
    assert_eq!(
        records[0].arguments,
        json!({"user": "bob", "password": "[redacted]"})
    );
    assert_eq!(
        records[0].decision,
        "allow (stages: rename: rewrote the arguments)"
    );

    let clear = Log::default();
    let mut needs = step("vault", &clear, passes);
    needs.secrets = true;
    let registry = builder().call_stage(needs).build().unwrap();
    let call = ToolCall::new(
        "s2",
        "sign_in",
        json!({"user": "ana", "password": "hunter22"}),
    );
    assert!(registry.call(&caller, call).await.is_ok());
    assert!(log_of(&clear)[0].contains("hunter22"));
}

#[tokio::test]
async fn a_result_stage_redacts_before_the_model_the_record_and_the_events_see_it() {
    let log = Log::default();
    let registry = builder()
        .result_stage(RedactKeys {
            log: Arc::clone(&log),
        })
        .build()
        .unwrap();
    let mut events = registry.events();
    let calls = [
        ("r1", "sign_in", json!({"user": "ana", "password": "pw"})),
        ("r2", "slow_echo", json!({"text": "hi"})),
    ];
    for (id, name, arguments) in calls.clone() {
        let outcome = registry
            .call(&user(), ToolCall::new(id, name, arguments))
            .await;
        let text = outcome.result.unwrap();
        assert!(!text.to_string().contains("sk-live"), "{text}");
        assert!(text.to_string().contains("[key removed]"), "{text}");
    }
    // A batch, and HTTP, get the redacted result too.
    let batch = calls
        .iter()
        .map(|(id, name, arguments)| ToolCall::new(format!("b{id}"), *name, arguments.clone()));
    for outcome in registry.run_batch(&user(), batch.collect()).await {
        assert!(!outcome.result.unwrap().to_string().contains("sk-live"));
    }
    let body =
        json!({"id": "h1", "name": "sign_in", "arguments": {"user": "ana", "password": "pw"}});
    let text = over_http(&registry, body).await;
    assert!(
        text.contains("[key removed]") && !text.contains("sk-live"),
        "{text}"
    );
    // The events carried the redacted result only.
    let mut finished = 0;
    while let Ok(event) = events.try_recv() {
        if let EventKind::CallFinished { result, .. } = &event.kind {
            finished += 1;
            assert!(!format!("{result:?}").contains("sk-live"), "{result:?}");
        }
    }
    assert_eq!(finished, 5);
    assert_eq!(log_of(&log).len(), 5);
}

/// A call stage that panics.
struct Panics;

impl CallStage for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    fn check(&self, call: &StageCall<'_>) -> StageVerdict {
        if call.call_id == "boom" {
            panic!("a stage bug");
        }
        StageVerdict::Continue
    }
}

/// A result stage that panics.
struct PanicsOnResults;

impl ResultStage for PanicsOnResults {
    fn name(&self) -> &str {
        "panics_on_results"
    }
    fn check(&self, call: &ResultCall<'_>, result: ToolResult) -> ToolResult {
        if call.call_id == "boom-result" {
            panic!("a result stage bug");
        }
        result
    }
}

#[tokio::test]
async fn a_panicking_stage_is_contained_and_every_other_call_goes_on() {
    let registry = builder()
        .call_stage(Panics)
        .result_stage(PanicsOnResults)
        .build()
        .unwrap();
    let caller = Caller::new("panic-caller", "user");
    let outcome = registry
        .call(&caller, ToolCall::new("boom", "note", json!({"text": "a"})))
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::Panicked);
    assert!(
        error.message.contains("the stage `panics` failed"),
        "{}",
        error.message
    );
    assert!(
        !error.message.contains("a stage bug"),
        "the panic's text stays in the log"
    );
    let outcome = registry
        .call(
            &caller,
            ToolCall::new("boom-result", "slow_echo", json!({"text": "a"})),
        )
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::Panicked);
    assert!(
        error
            .message
            .contains("the stage `panics_on_results` failed"),
        "{}",
        error.message
    );
    let outcome = registry
        .call(&caller, ToolCall::new("fine", "note", json!({"text": "a"})))
        .await;
    assert!(outcome.is_ok());
    let records = decisions(&registry, "panic-caller").await;
    assert_eq!(records.len(), 3, "every call has its record: {records:?}");
}

/// Logs each call's id when it begins and its outcome when it ends.
struct Timing {
    log: Log,
}

impl CallWrapper for Timing {
    fn name(&self) -> &str {
        "timing"
    }
    fn wrap<'a>(
        &'a self,
        call: &WrappedCall<'_>,
        inner: BoxFuture<'a, ToolOutcome>,
    ) -> BoxFuture<'a, ToolOutcome> {
        let id = call.call_id.to_owned();
        async move {
            let outcome = inner.await;
            let ended = match &outcome.result {
                Ok(_) => "ok".to_owned(),
                Err(error) => error.code.to_string(),
            };
            self.log.lock().unwrap().push(format!("{id} {ended}"));
            outcome
        }
        .boxed()
    }
}

/// A wrapper that names itself in a shared log, to show nesting.
struct Named(&'static str, Log);

impl CallWrapper for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn wrap<'a>(
        &'a self,
        _: &WrappedCall<'_>,
        inner: BoxFuture<'a, ToolOutcome>,
    ) -> BoxFuture<'a, ToolOutcome> {
        async move {
            self.1.lock().unwrap().push(format!("{} in", self.0));
            let outcome = inner.await;
            self.1.lock().unwrap().push(format!("{} out", self.0));
            outcome
        }
        .boxed()
    }
}

#[tokio::test]
async fn stages_run_in_the_order_they_were_added() {
    let log = Log::default();
    let first = |_: &StageCall<'_>| StageVerdict::Rewrite(json!({"text": "first"}));
    let second = |call: &StageCall<'_>| {
        let text = call.arguments()["text"].as_str().unwrap().to_owned();
        StageVerdict::Rewrite(json!({"text": format!("{text}+second")}))
    };
    let registry = builder()
        .call_stage(step("one", &log, first))
        .call_stage(step("two", &log, second))
        .result_stage(RedactKeys {
            log: Arc::clone(&log),
        })
        .wrap_calls(Named("outer", Arc::clone(&log)))
        .wrap_calls(Named("inner", Arc::clone(&log)))
        .build()
        .unwrap();
    let outcome = registry
        .call(&user(), ToolCall::new("o", "note", json!({"text": "x"})))
        .await;
    assert_eq!(outcome.result.unwrap(), "noted: first+second");
    let seen = log_of(&log);
    let expected = [
        "outer in".to_owned(),
        "inner in".to_owned(),
        format!("one:o:{}", json!({"text": "x"})),
        format!("two:o:{}", json!({"text": "first"})),
        "redact_keys:o".to_owned(),
        "inner out".to_owned(),
        "outer out".to_owned(),
    ];
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn a_wrapper_sees_every_call_with_its_outcome_refusals_included() {
    let log = Log::default();
    let registry = builder()
        .wrap_calls(Timing {
            log: Arc::clone(&log),
        })
        .build()
        .unwrap();
    registry
        .call(&user(), ToolCall::new("w1", "note", json!({"text": "a"})))
        .await;
    registry
        .call(&user(), ToolCall::new("w2", "note", json!({"text": 5})))
        .await;
    registry
        .call(&user(), ToolCall::new("w3", "admin_report", json!({})))
        .await;
    let batch = vec![ToolCall::new("w4", "slow_echo", json!({"text": "b"}))];
    registry.run_batch(&user(), batch).await;
    assert_eq!(
        log_of(&log),
        ["w1 ok", "w2 invalid_arguments", "w3 unknown_tool", "w4 ok"]
    );
}

/// Hides the admin's report from one caller, whatever its role.
struct HideReportFrom(&'static str);

impl ListingStage for HideReportFrom {
    fn name(&self) -> &str {
        "hide_report"
    }
    fn hides(&self, caller: &Caller, tool: &ToolDefinition) -> bool {
        caller.id() == self.0 && tool.name == "admin_report"
    }
}

#[tokio::test]
async fn a_hidden_tool_is_in_no_list_and_a_call_to_it_is_answered_as_an_unknown_one() {
    let registry = builder()
        .listing_stage(HideReportFrom("eve"))
        .build()
        .unwrap();
    let eve = Caller::new("eve", "admin");
    let other = admin();
    let names = |list: toolgate::ToolList| -> Vec<String> {
        list.iter().map(|tool| tool.name.clone()).collect()
    };
    assert!(!names(registry.visible_to(&eve)).contains(&"admin_report".to_owned()));
    assert!(names(registry.visible_to(&other)).contains(&"admin_report".to_owned()));
    assert!(
        !registry
            .visible_json(&eve)
            .to_string()
            .contains("admin_report")
    );
    assert!(
        registry
            .visible_json(&other)
            .to_string()
            .contains("admin_report")
    );
    assert!(registry.definition(&eve, "admin_report").is_none());
    assert!(
        registry
            .search(&eve, "admin report", 10)
            .iter()
            .all(|hit| hit.definition.name != "admin_report")
    );
    assert!(
        registry
            .search(&other, "admin report", 10)
            .iter()
            .any(|hit| hit.definition.name == "admin_report")
    );

    // Called: the same answer as for a tool that does not exist, naming only what eve sees.
    let hidden = registry
        .call(&eve, ToolCall::new("h", "admin_report", json!({})))
        .await;
    let missing = registry
        .call(&eve, ToolCall::new("h", "admin_repart", json!({})))
        .await;
    let (hidden, missing) = (hidden.error().unwrap(), missing.error().unwrap());
    assert_eq!(hidden.code, ErrorCode::UnknownTool);
    assert_eq!(hidden.code, missing.code);
    assert_eq!(
        hidden.message.replace("admin_report", "NAME"),
        missing.message.replace("admin_repart", "NAME"),
    );
    assert!(
        !hidden
            .message
            .replace("`admin_report`;", "")
            .contains("admin_report"),
        "{}",
        hidden.message
    );
    assert!(
        !missing.message.contains("admin_report"),
        "no suggestion of it: {}",
        missing.message
    );
    assert!(
        registry
            .call(&other, ToolCall::new("h", "admin_report", json!({})))
            .await
            .is_ok()
    );

    // MCP's tools/list, and its calls.
    let client = connect_in_memory(McpServer::for_caller(registry.clone(), eve), ()).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    assert!(tools.iter().all(|tool| tool.name != "admin_report"));
    assert!(!tools.is_empty());
    let called = client
        .peer()
        .call_tool(CallToolRequestParams::new("admin_report"))
        .await;
    let answered = format!("{called:?}");
    assert!(!answered.contains("all well"), "{answered}");
}

#[tokio::test]
async fn a_rewritten_call_that_waits_for_approval_runs_as_rewritten() {
    let log = Log::default();
    let both = |_: &StageCall<'_>| StageVerdict::Rewrite(json!({"text": "rewritten"}));
    let registry = builder()
        .call_stage(step("rewrite", &log, both))
        .call_stage(step("review", &log, needs_approval))
        .build()
        .unwrap();
    let waiting = registry
        .call(
            &user(),
            ToolCall::new("rw", "note", json!({"text": "asked"})),
        )
        .await;
    let error = waiting.error().unwrap();
    assert_eq!(error.code, ErrorCode::ApprovalRequired, "{error:?}");
    let pending = registry.pending_approvals(&admin()).await.unwrap();
    assert_eq!(
        pending[0].arguments,
        json!({"text": "rewritten"}),
        "the approver sees what will run"
    );
    let ticket = error.details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let outcome = registry.approve(&ticket, &admin()).await.unwrap();
    assert_eq!(outcome.result.unwrap(), "noted: rewritten");
}

/// Stops a run before its second request; refuses replies that call `transfer`; redacts
/// `sk-live-…` keys from the model's text.
struct Guard {
    log: Log,
}

impl ModelStage for Guard {
    fn name(&self) -> &str {
        "guard"
    }
    fn before_request(&self, turn: &ModelTurn<'_>) -> TurnVerdict {
        self.log
            .lock()
            .unwrap()
            .push(format!("before {} {:?}", turn.turn, turn.tools.len()));
        match turn.turn > 2 {
            true => TurnVerdict::Stop {
                reason: "two turns are enough".into(),
            },
            false => TurnVerdict::Continue,
        }
    }
    fn after_response(&self, turn: &ModelTurn<'_>, reply: &mut ModelReply) -> TurnVerdict {
        self.log
            .lock()
            .unwrap()
            .push(format!("after {}", turn.turn));
        if reply.calls.iter().any(|call| call.name == "transfer") {
            return TurnVerdict::Stop {
                reason: "the model may not move money".into(),
            };
        }
        if let Some(text) = &mut reply.text {
            *text = without_keys(text);
        }
        TurnVerdict::Continue
    }
}

fn stopped(status: &RunStatus) -> (&str, &str) {
    match status {
        RunStatus::Stopped { stage, reason } => (stage, reason),
        other => panic!("not stopped by a stage: {other:?}"),
    }
}

#[tokio::test]
async fn model_stages_see_every_turn_and_may_change_the_reply_or_stop_the_run() {
    let ran = agent::Ran::default();
    let log = Log::default();
    let agent = |model: agent::Scripted| {
        Agent::builder(agent::builder(&ran).build().unwrap(), model)
            .model_stage(Guard {
                log: Arc::clone(&log),
            })
            .build()
    };
    let customer = Caller::new("cust-2", "customer");
    // The reply's text is redacted before anyone keeps it.
    let model = agent::Scripted::new([agent::text("your key is sk-live-abc")]);
    let run = agent(model).run(&customer, "key?").await.unwrap();
    assert_eq!(run.text(), Some("your key is [key removed]"));
    assert_eq!(log_of(&log), ["before 1 2", "after 1"]);
    // A reply calling `transfer` stops the run; nothing runs.
    let model = agent::Scripted::new([agent::calls(&[(
        "t",
        "transfer",
        r#"{"amount": 5, "to": "x"}"#,
    )])]);
    let run = agent(model).run(&customer, "pay").await.unwrap();
    assert_eq!(
        stopped(run.status()),
        ("guard", "the model may not move money")
    );
    assert_eq!(ran.transfers(), 0);
    // Before the third request, the run stops.
    let model = agent::Scripted::new([
        agent::calls(&[("l1", "lookup_pet", r#"{"name": "Rex"}"#)]),
        agent::calls(&[("l2", "lookup_pet", r#"{"name": "Max"}"#)]),
        agent::text("never asked"),
    ]);
    let run = agent(model.clone()).run(&customer, "pets").await.unwrap();
    assert_eq!(stopped(run.status()), ("guard", "two turns are enough"));
    assert_eq!(model.seen().len(), 2, "the third request was never made");
}

/// A model stage that panics.
struct PanickingModelStage;

impl ModelStage for PanickingModelStage {
    fn name(&self) -> &str {
        "fragile"
    }
    fn before_request(&self, _: &ModelTurn<'_>) -> TurnVerdict {
        panic!("a model stage bug")
    }
}

#[tokio::test]
async fn a_panicking_model_stage_stops_its_run_and_nothing_else() {
    let ran = agent::Ran::default();
    let model = agent::Scripted::new([agent::text("hello")]);
    let agent = Agent::builder(agent::builder(&ran).build().unwrap(), model.clone())
        .model_stage(PanickingModelStage)
        .build();
    let run = agent
        .run(&Caller::new("cust-3", "customer"), "hi")
        .await
        .unwrap();
    let (stage, reason) = stopped(run.status());
    assert_eq!(stage, "fragile");
    assert!(reason.contains("failed"), "{reason}");
    assert!(model.seen().is_empty());
}

#[tokio::test]
async fn a_dry_run_reports_a_stages_demand_for_approval_unless_the_policy_refuses() {
    let log = Log::default();
    let registry = builder()
        .call_stage(step("review", &log, needs_approval))
        .build()
        .unwrap();
    let dry = || CallOptions {
        dry_run: true,
        ..CallOptions::default()
    };
    let call = ToolCall::new("d1", "note", json!({"text": "dry-only"}));
    let report = registry
        .call_with(&user(), call, dry())
        .await
        .result
        .unwrap();
    assert_eq!(report["decision"], "require_approval");
    assert_eq!(report["reason"], "notes are reviewed today");
    assert!(!noted("dry-only"), "a dry run runs nothing");
    // The policy's refusal wins over the stage's demand.
    let denying = builder()
        .call_stage(step("review", &log, needs_approval))
        .policy(
            |_: &toolgate::policy::PolicyRequest<'_>| toolgate::policy::Decision::Deny {
                reason: "closed".into(),
            },
        )
        .build()
        .unwrap();
    let call = ToolCall::new("d2", "note", json!({"text": "x"}));
    let report = denying
        .call_with(&user(), call, dry())
        .await
        .result
        .unwrap();
    assert_eq!(report["decision"], "deny");
}

#[tokio::test]
async fn a_stage_that_requires_approval_is_approved_over_http() {
    let log = Log::default();
    let registry = builder()
        .call_stage(step("review", &log, needs_approval))
        .build()
        .unwrap();
    let body = json!({"id": "h", "name": "note", "arguments": {"text": "via-http"}});
    let waiting: Value = serde_json::from_str(&over_http(&registry, body).await).unwrap();
    let error = &waiting["error"];
    assert_eq!(error["code"], "approval_required", "{waiting}");
    assert!(!noted("via-http"));
    let ticket = error["details"]["ticket"].clone();
    let approved = post_as(
        &registry,
        admin(),
        "/approvals/approve",
        json!({"ticket": ticket}),
    )
    .await;
    assert!(approved.contains("noted: via-http"), "{approved}");
    assert!(noted("via-http"));
}

/// Takes the admin's report out of every list, for everyone, and lets calls reach it (as
/// for a tool out of service for a while, which answers why itself).
struct ReportOutOfLists;

impl ListingStage for ReportOutOfLists {
    fn name(&self) -> &str {
        "report_out_of_lists"
    }
    fn hides(&self, _caller: &Caller, tool: &ToolDefinition) -> bool {
        tool.name == "admin_report"
    }
    fn lists_only(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_stage_that_hides_from_lists_only_lets_calls_through_and_others_still_hide() {
    let registry = builder()
        .listing_stage(ReportOutOfLists)
        .listing_stage(HideReportFrom("eve"))
        .build()
        .unwrap();
    let (eve, other) = (Caller::new("eve", "admin"), admin());
    for caller in [&eve, &other] {
        let listed = registry.visible_json(caller).to_string();
        assert!(!listed.contains("admin_report"), "{listed}");
    }
    let called = registry
        .call(&other, ToolCall::new("l1", "admin_report", json!({})))
        .await;
    assert!(called.result.is_ok(), "{:?}", called.result);
    // The stage that hides it from eve's calls too still does.
    let hidden = registry
        .call(&eve, ToolCall::new("l2", "admin_report", json!({})))
        .await;
    assert_eq!(hidden.error().unwrap().code, ErrorCode::UnknownTool);
    // Never more than the role sees: a user's call is still of no tool.
    let user = registry
        .call(&user(), ToolCall::new("l3", "admin_report", json!({})))
        .await;
    assert_eq!(user.error().unwrap().code, ErrorCode::UnknownTool);
}
