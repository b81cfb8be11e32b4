//! What a call needs of the runtime it is made on: a synchronous tool runs on Tokio's
//! blocking pool, and a tool that does not finish at once is waited for only with its time
//! limit kept, which takes Tokio's timers. Where those are missing (no Tokio runtime, or one
//! built without `enable_time`), the call ends with `runtime_unavailable` saying what to
//! change, and its record says so; a tool that finishes at once needs neither.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolgate::prelude::*;

/// Sync calls that began running.
static SYNC_RUNS: AtomicUsize = AtomicUsize::new(0);
/// Lets the blocking tool end (once its call has been answered).
static RELEASE_BLOCKING: AtomicBool = AtomicBool::new(false);
/// The cancellation tokens of `waits_forever` calls, by caller (tests run at once, each as
/// a caller of its own).
static TOKENS: Mutex<Vec<(String, CancellationToken)>> = Mutex::new(Vec::new());

/// Counts its runs and returns its tag.
#[tool(permission = "user")]
fn counted(tag: String) -> String {
    SYNC_RUNS.fetch_add(1, Ordering::SeqCst);
    tag
}

/// Blocks its thread until the test lets it go.
#[tool(permission = "user", timeout = "7s")]
fn blocks_until_released() -> String {
    while !RELEASE_BLOCKING.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    "released".to_owned()
}

/// Never finishes; keeps its cancellation token where the test can see it.
#[tool(permission = "user", timeout = "3s")]
async fn waits_forever(#[ctx] context: ToolContext) -> String {
    let token = context.cancellation().clone();
    TOKENS
        .lock()
        .unwrap()
        .push((context.caller().id().to_owned(), token));
    std::future::pending::<()>().await;
    unreachable!()
}

/// Finishes when first polled.
#[tool(permission = "user")]
async fn at_once(tag: String) -> String {
    tag
}

fn registry() -> Registry {
    Registry::builder().roles(["user"]).build().unwrap()
}

/// A call of `tool`, with the arguments it takes.
fn call(tool: &str) -> ToolCall {
    let tagged = ["counted", "at_once"].contains(&tool);
    let arguments = if tagged {
        json!({"tag": "x"})
    } else {
        json!({})
    };
    ToolCall::new("1", tool, arguments)
}

/// A current-thread Tokio runtime without timers.
fn without_timers() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn runtime_unavailable(outcome: &ToolOutcome) -> &str {
    let error = outcome.result.as_ref().expect_err("the call fails");
    assert_eq!(error.code, ErrorCode::RuntimeUnavailable, "{error:?}");
    assert_eq!(error.code.as_str(), "runtime_unavailable");
    &error.message
}

#[test]
fn a_sync_tool_called_outside_tokio_does_not_run_and_says_so() {
    let registry = registry();
    let caller = Caller::new("ann", "user");
    let before = SYNC_RUNS.load(Ordering::SeqCst);
    let outcome = futures::executor::block_on(registry.call(&caller, call("counted")));
    let message = runtime_unavailable(&outcome);
    assert!(message.contains("outside a Tokio runtime"), "{message}");
    assert!(message.contains("blocking pool"), "{message}");
    assert_eq!(
        SYNC_RUNS.load(Ordering::SeqCst),
        before,
        "the tool did not run"
    );
    // The registry goes on serving, and the same call runs on a runtime.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let outcome = runtime.block_on(registry.call(&caller, call("counted")));
    assert_eq!(outcome.result.unwrap(), json!("x"));
}

#[test]
fn a_tool_still_working_on_a_runtime_without_timers_is_not_waited_for_without_its_limit() {
    let registry = registry();
    let caller = Caller::new("ann", "user");
    let runtime = without_timers();
    let outcome = runtime.block_on(registry.call(&caller, call("blocks_until_released")));
    RELEASE_BLOCKING.store(true, Ordering::SeqCst);
    let message = runtime_unavailable(&outcome);
    assert!(message.contains("time limit of 7s"), "{message}");
    assert!(message.contains("enable_time()"), "{message}");
    // Its record says what the outcome says.
    let history = runtime.block_on(registry.history("ann", 1)).unwrap();
    assert_eq!(history[0].outcome, "runtime_unavailable");
    assert_eq!(history[0].tool, "blocks_until_released");
}

#[test]
fn an_async_tool_still_working_without_timers_is_stopped_and_told_to_stop() {
    let registry = registry();
    let caller = Caller::new("ada", "user");
    let outcome = without_timers().block_on(registry.call(&caller, call("waits_forever")));
    let message = runtime_unavailable(&outcome);
    assert!(message.contains("time limit of 3s"), "{message}");
    let tokens = TOKENS.lock().unwrap();
    let ada = tokens.iter().find(|(caller, _)| caller == "ada");
    let (_, token) = ada.expect("the tool ran");
    assert!(token.is_cancelled(), "the tool's work was told to stop");
}

#[test]
fn an_async_tool_still_working_outside_tokio_says_so() {
    let registry = registry();
    let caller = Caller::new("bob", "user");
    let outcome = futures::executor::block_on(registry.call(&caller, call("waits_forever")));
    let message = runtime_unavailable(&outcome);
    assert!(message.contains("outside a Tokio runtime"), "{message}");
    assert!(message.contains("time limit"), "{message}");
}

#[test]
fn a_tool_that_finishes_at_once_needs_neither_timers_nor_tokio() {
    let registry = registry();
    let caller = Caller::new("ann", "user");
    let outcome = futures::executor::block_on(registry.call(&caller, call("at_once")));
    assert_eq!(outcome.result.unwrap(), json!("x"));
    let outcome = without_timers().block_on(registry.call(&caller, call("at_once")));
    assert_eq!(outcome.result.unwrap(), json!("x"));
}

#[test]
fn a_batch_without_timers_answers_every_call() {
    let registry = registry();
    let caller = Caller::new("ann", "user");
    let calls = vec![
        ToolCall::new("a", "at_once", json!({"tag": "a"})),
        ToolCall::new("b", "waits_forever", json!({})),
        ToolCall::new("c", "at_once", json!({"tag": "c"})),
    ];
    let outcomes = without_timers().block_on(registry.run_batch(&caller, calls));
    let ids: Vec<&str> = outcomes
        .iter()
        .map(|outcome| outcome.call_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(outcomes[0].result.as_ref().unwrap(), &json!("a"));
    runtime_unavailable(&outcomes[1]);
    assert_eq!(outcomes[2].result.as_ref().unwrap(), &json!("c"));
}
