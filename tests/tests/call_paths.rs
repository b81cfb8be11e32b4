//! Every call walks one path. A call no step makes wait runs to its outcome in the poll
//! that starts it; one that waits (a tool still working, an approval, a rate limit's store,
//! an application's wrapper) goes on in a future of its own, from the step it waited at.
//! Whichever way a call goes, its outcome and its audit record are the same: every case
//! here is made as a plain call, with options, in a DEBUG span, inside a wrapper, past a
//! rate limit, alone and inside a batch, and compared.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::{Value, json};
use toolgate::approval::{ApprovalAnswer, ApprovalRequest};
use toolgate::audit::{AuditRecord, AuditSink};
use toolgate::policy::{Decision, PolicyRequest};
use toolgate::prelude::*;
use toolgate::rate_limits::RateLimit;
use toolgate::stage::{CallWrapper, WrappedCall};

/// Add two numbers (finishes when first polled).
#[tool(permission = "user", read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Logs, waits a little (polled again only once woken), and logs again.
#[tool(permission = "user", read_only)]
async fn logs_around_a_wait() -> &'static str {
    tracing::info!("before the wait");
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    tracing::info!("after the wait");
    "done"
}

/// Add two numbers, after letting other tasks run once (not finished when first polled).
#[tool(permission = "user", read_only)]
async fn add_later(a: i64, b: i64) -> i64 {
    tokio::task::yield_now().await;
    a + b
}

/// Double a number on a blocking thread (a synchronous tool).
#[tool(permission = "user", read_only)]
fn double(n: i64) -> i64 {
    n * 2
}

/// Panics.
#[tool(permission = "user", read_only)]
async fn explode() -> i64 {
    panic!("the tool blew up")
}

/// Never finishes.
#[tool(permission = "user", read_only, timeout = "50ms")]
async fn stall() -> i64 {
    std::future::pending::<()>().await;
    0
}

/// Only administrators see it.
#[tool(permission = "admin", read_only)]
async fn audit_everything() -> i64 {
    0
}

/// Send money (the policy wants each transfer approved).
#[tool(permission = "user")]
async fn transfer(amount: u32, to: String) -> String {
    format!("sent {amount} to {to}")
}

/// A word whose reading panics on `explode` (application code on the call's path).
#[derive(schemars::JsonSchema)]
struct Word(String);

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = String::deserialize(deserializer)?;
        match word.as_str() {
            "explode" => panic!("reading the word blew up"),
            "" => Err(D::Error::custom("a word is not empty")),
            _ => Ok(Word(word)),
        }
    }
}

/// Echo a word.
#[tool(permission = "user", read_only)]
async fn echo(word: Word) -> String {
    word.0
}

#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<AuditRecord>>>);

impl AuditSink for Collect {
    fn record(&self, record: &AuditRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

impl Collect {
    fn take(&self) -> Vec<AuditRecord> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn policy(request: &PolicyRequest) -> Decision {
    match (
        request.tool.name.as_str(),
        request.arguments()["a"].as_i64(),
    ) {
        ("transfer", _) => Decision::RequireApproval {
            reason: "money moves".into(),
        },
        ("add", Some(13)) => Decision::Deny {
            reason: "13 is unlucky".into(),
        },
        ("add", Some(66)) => panic!("the policy blew up"),
        _ => Decision::Allow,
    }
}

async fn approver(request: ApprovalRequest) -> ApprovalAnswer {
    match request.arguments["to"].as_str() {
        Some("bob") => ApprovalAnswer::Approve,
        Some("carol") => ApprovalAnswer::ApproveWithArguments(json!({"amount": 1, "to": "carol"})),
        _ => ApprovalAnswer::Deny {
            reason: "unknown recipient".into(),
        },
    }
}

/// With a sink, records are written by a future (the call waits for it); without, they go
/// to the history at once.
fn registry(sink: Option<&Collect>) -> Registry {
    registry_with(sink, |builder| builder)
}

/// [`registry`], with more of the builder's settings.
fn registry_with(
    sink: Option<&Collect>,
    more: impl FnOnce(toolgate::RegistryBuilder) -> toolgate::RegistryBuilder,
) -> Registry {
    let builder = Registry::builder()
        .roles(["user", "admin"])
        .policy(policy)
        .approver("desk", approver);
    let builder = match sink {
        Some(sink) => builder.audit_sink(sink.clone()),
        None => builder,
    };
    more(builder).build().unwrap()
}

/// A wrapper that only passes the call on: the call is then a future of its own inside it.
struct PassOn;

impl CallWrapper for PassOn {
    fn name(&self) -> &str {
        "pass_on"
    }

    fn wrap<'a>(
        &'a self,
        _call: &WrappedCall<'_>,
        inner: BoxFuture<'a, ToolOutcome>,
    ) -> BoxFuture<'a, ToolOutcome> {
        inner
    }
}

/// Registries whose calls wait where plain ones do not: inside a wrapper, and at a rate
/// limit's store (one no case reaches).
fn waiting_registries(sink: Option<&Collect>) -> [(&'static str, Registry); 2] {
    let generous = RateLimit::new(1_000_000, std::time::Duration::from_secs(60));
    [
        (
            "wrapped",
            registry_with(sink, |builder| builder.wrap_calls(PassOn)),
        ),
        (
            "rate-limited",
            registry_with(sink, |builder| builder.rate_limit_per_caller(generous)),
        ),
    ]
}

/// Every kind of call: at once, waiting on its tool, on a blocking thread, panicking,
/// timing out, unknown, hidden, unreadable (given by position too), refused, approved,
/// edited by the approver, and with a policy or an argument type that panics.
fn cases() -> Vec<(&'static str, Value)> {
    vec![
        ("add", json!({"a": 2, "b": 3})),
        ("add_later", json!({"a": 2, "b": 3})),
        ("double", json!({"n": 21})),
        ("explode", json!({})),
        ("stall", json!({})),
        ("nowhere", json!({})),
        ("audit_everything", json!({})),
        ("add", json!({"a": "two", "b": 3})),
        ("add", json!({"a": 2})),
        ("add", json!({"a": 13, "b": 1})),
        ("add", json!({"a": 66, "b": 1})),
        ("transfer", json!({"amount": 5, "to": "bob"})),
        ("transfer", json!({"amount": 5, "to": "carol"})),
        ("transfer", json!({"amount": 5, "to": "mallory"})),
        ("echo", json!({"word": "hello"})),
        ("echo", json!({"word": ""})),
        ("echo", json!({"word": "explode"})),
        // By position: serde would read `add`'s parameters from it, the schema refuses it.
        ("add", json!([2, 3])),
    ]
}

/// What must agree between two ways of making a call.
fn seen(outcome: &ToolOutcome) -> Value {
    let result = match &outcome.result {
        Ok(value) => json!({"ok": value}),
        Err(error) => json!({"code": error.code.to_string(), "message": error.message}),
    };
    json!({
        "call_id": outcome.call_id.as_str(),
        "tool": outcome.tool.as_str(),
        "is_content": outcome.is_content,
        "result": result,
    })
}

fn recorded(record: &AuditRecord) -> Value {
    json!({
        "tool": record.tool,
        "call_id": record.call_id,
        "arguments": record.arguments,
        "decision": record.decision,
        "approver": record.approver,
        "outcome": record.outcome,
    })
}

fn call_of(index: usize, (tool, arguments): &(&str, Value)) -> ToolCall {
    ToolCall::new(format!("call-{index}"), *tool, arguments.to_string())
}

/// Options that change nothing about the outcome.
fn options() -> CallOptions {
    CallOptions {
        cancel: Some(CancellationToken::new()),
        run_id: Some("run-1".into()),
        ..CallOptions::default()
    }
}

/// Makes `call` with a subscriber that wants DEBUG spans: the call walks in its span. (The
/// test runtime has one thread: the subscriber is this thread's.)
async fn in_a_span(call: impl Future<Output = ToolOutcome>) -> ToolOutcome {
    toolgate_tests::share_callsite_interest();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(std::io::sink)
        .finish();
    let _debug = tracing::subscriber::set_default(subscriber);
    assert!(tracing::enabled!(tracing::Level::DEBUG));
    call.await
}

#[tokio::test]
async fn every_kind_of_call_ends_alike_at_once_with_options_in_a_span_and_where_it_waits() {
    let caller = Caller::new("alice", "user");
    for sink in [None, Some(Collect::default())] {
        let registry = registry(sink.as_ref());
        let waiting = waiting_registries(sink.as_ref());
        for (index, case) in cases().iter().enumerate() {
            let plain = registry.call(&caller, call_of(index, case)).await;
            let plain_records = sink.as_ref().map(Collect::take);
            let with_options = registry.call_with(&caller, call_of(index, case), options());
            let with_options = with_options.await;
            let options_records = sink.as_ref().map(Collect::take);
            let spanned = in_a_span(registry.call(&caller, call_of(index, case))).await;
            let spanned_records = sink.as_ref().map(Collect::take);
            assert_eq!(seen(&plain), seen(&with_options), "{case:?}");
            assert_eq!(seen(&plain), seen(&spanned), "{case:?}");
            let of = |records: &[AuditRecord]| records.iter().map(recorded).collect::<Vec<_>>();
            let plain_records = plain_records.inspect(|records| {
                assert_eq!(records.len(), 1, "{case:?}: one record per call");
                assert_eq!(
                    Some(of(records)),
                    options_records.as_deref().map(of),
                    "{case:?}"
                );
                assert_eq!(
                    Some(of(records)),
                    spanned_records.as_deref().map(of),
                    "{case:?}"
                );
            });
            for (how, other) in &waiting {
                let outcome = other.call(&caller, call_of(index, case)).await;
                assert_eq!(seen(&plain), seen(&outcome), "{how}: {case:?}");
                if let Some(plain) = &plain_records {
                    let records = sink.as_ref().map(Collect::take).unwrap_or_default();
                    assert_eq!(records.len(), 1, "{how}: {case:?}: one record per call");
                    assert_eq!(
                        recorded(&plain[0]),
                        recorded(&records[0]),
                        "{how}: {case:?}"
                    );
                }
            }
        }
    }
}

/// A call's span holds what its tool logs before and after the tool first waits: the span
/// goes on with the rest of the call.
#[test]
fn a_calls_span_holds_its_tool_before_and_after_it_waits() {
    let registry = registry_with(None, |builder| {
        builder.filter_linked(|tool| tool.name == "logs_around_a_wait")
    });
    let caller = Caller::new("alice", "user");
    let call = ToolCall::new("c-span", "logs_around_a_wait", json!({}));
    let (outcome, log) = toolgate_tests::capture_async("debug", registry.call(&caller, call));
    assert_eq!(outcome.result.unwrap(), json!("done"));
    for when in ["before the wait", "after the wait"] {
        let line = log.lines().find(|line| line.contains(when));
        let line = line.unwrap_or_else(|| panic!("no line says {when:?} in {log}"));
        assert!(
            line.contains("tool_call{") && line.contains("logs_around_a_wait"),
            "{when}: {line}"
        );
    }
}

#[tokio::test]
async fn the_outcomes_are_what_each_case_calls_for() {
    let caller = Caller::new("alice", "user");
    let registry = registry(None);
    let mut outcomes = Vec::new();
    for (index, case) in cases().iter().enumerate() {
        outcomes.push(seen(&registry.call(&caller, call_of(index, case)).await));
    }
    let results: Vec<&Value> = outcomes.iter().map(|outcome| &outcome["result"]).collect();
    let code = |index: usize| results[index]["code"].as_str().unwrap_or("ok");
    assert_eq!(results[0]["ok"], 5);
    assert_eq!(results[1]["ok"], 5);
    assert_eq!(results[2]["ok"], 42);
    assert_eq!(code(3), "panicked");
    assert_eq!(code(4), "timeout");
    assert_eq!(code(5), "unknown_tool");
    // Hidden: the same answer as a tool that does not exist.
    assert_eq!(code(6), "unknown_tool");
    assert!(
        !results[6]["message"]
            .as_str()
            .unwrap()
            .contains("audit_everything is")
    );
    assert_eq!(code(7), "invalid_arguments");
    assert_eq!(code(8), "invalid_arguments");
    assert_eq!(code(9), "denied");
    // The policy's panic is contained: the call does not run, and the registry goes on.
    assert_eq!(code(10), "panicked");
    assert!(
        results[10]["message"]
            .as_str()
            .unwrap()
            .contains("the call did not run")
    );
    assert_eq!(results[11]["ok"], "sent 5 to bob");
    assert_eq!(results[12]["ok"], "sent 1 to carol");
    assert_eq!(code(13), "approval_denied");
    assert_eq!(results[14]["ok"], "hello");
    assert_eq!(code(15), "invalid_arguments");
    assert_eq!(code(16), "panicked");
    assert_eq!(code(17), "invalid_arguments");
    // And the registry still answers.
    let again = registry.call(&caller, call_of(0, &cases()[0])).await;
    assert_eq!(again.result.unwrap(), 5);
}

#[tokio::test]
async fn a_batch_ends_each_call_as_a_single_call_does() {
    let caller = Caller::new("alice", "user");
    let sink = Collect::default();
    let registry = registry(Some(&sink));
    let cases = cases();
    let mut alone = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        alone.push(seen(&registry.call(&caller, call_of(index, case)).await));
    }
    let alone_records: Vec<Value> = sink.take().iter().map(recorded).collect();
    for mode in [
        BatchMode::ReadOnlyParallel,
        BatchMode::Parallel,
        BatchMode::Sequential,
    ] {
        let calls = cases.iter().enumerate().map(|(i, case)| call_of(i, case));
        let options = BatchOptions {
            mode: Some(mode),
            // Fewer places than calls that wait: the places are reused.
            max_concurrency: Some(2),
            ..BatchOptions::default()
        };
        let batch = registry
            .run_batch_with(&caller, calls.collect(), options)
            .await;
        let batch: Vec<Value> = batch.iter().map(seen).collect();
        assert_eq!(batch, alone, "{mode:?}");
        let mut records: Vec<Value> = sink.take().iter().map(recorded).collect();
        let mut expected = alone_records.clone();
        // Parallel calls finish in any order; each has its record.
        let by_call = |record: &Value| record["call_id"].as_str().unwrap().to_owned();
        records.sort_by_key(by_call);
        expected.sort_by_key(by_call);
        assert_eq!(records, expected, "{mode:?}");
    }
}

#[test]
fn only_async_tools_whose_body_cannot_wait_run_in_place() {
    let in_place = |name: &str| {
        let tools = toolgate::__private::inventory::iter::<toolgate::__private::StaticTool>;
        let tool = tools.into_iter().find(|tool| tool.name == name).unwrap();
        tool.invoke_now.is_some()
    };
    // No `.await`; `panic!` and `format!` cannot hide one.
    for name in ["add", "explode", "transfer", "echo", "audit_everything"] {
        assert!(in_place(name), "{name}");
    }
    // An `.await`, or a synchronous function (run on the blocking pool).
    for name in ["add_later", "stall", "double"] {
        assert!(!in_place(name), "{name}");
    }
}
