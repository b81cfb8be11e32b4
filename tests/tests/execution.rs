//! Running calls: one outcome per call in call order, read-only calls in parallel, others in
//! order, timeouts, cancellation, panics, error codes. No test depends on the machine's speed:
//! concurrency is proven with barriers, timeouts with tools that never finish.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::sync::Barrier;
use toolgate::prelude::*;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
static ACTIVE_WRITES: AtomicUsize = AtomicUsize::new(0);
static MAX_ACTIVE_WRITES: AtomicUsize = AtomicUsize::new(0);

struct Rendezvous(Barrier);

/// A read that only finishes when `parties` reads wait together (proves parallelism).
#[tool(permission = "user", read_only, timeout = "10s")]
async fn meet(#[ctx] rendezvous: State<Rendezvous>, tag: String) -> String {
    let Rendezvous(barrier) = &*rendezvous;
    barrier.wait().await;
    tag
}

/// Tags of the ordering test; other tests run in parallel with it and use other tags.
const ORDERED: &str = "ordered-";

/// A write that records its order and how many writes of the ordering test overlap.
#[tool(permission = "user", timeout = "10s")]
async fn write(tag: String) -> String {
    let tracked = tag.starts_with(ORDERED);
    if tracked {
        let active = ACTIVE_WRITES.fetch_add(1, Ordering::SeqCst) + 1;
        MAX_ACTIVE_WRITES.fetch_max(active, Ordering::SeqCst);
    }
    tokio::task::yield_now().await;
    LOG.lock().unwrap().push(tag.clone());
    if tracked {
        ACTIVE_WRITES.fetch_sub(1, Ordering::SeqCst);
    }
    tag
}

/// A read that records its order.
#[tool(permission = "user", read_only)]
fn read(tag: String) -> String {
    LOG.lock().unwrap().push(tag.clone());
    tag
}

/// Never finishes.
#[tool(permission = "user", read_only, timeout = "50ms")]
async fn hang() -> u8 {
    std::future::pending::<()>().await;
    0
}

/// Never finishes, and never yields either: a sync tool stuck in a loop.
#[tool(permission = "user", read_only, timeout = "50ms")]
fn spin(#[ctx] cancel: CancellationToken) -> u8 {
    // Stops once cancelled, so the test leaves no thread spinning behind.
    while !cancel.is_cancelled() {
        std::thread::sleep(Duration::from_millis(1));
    }
    0
}

/// Waits until its call is cancelled.
#[tool(permission = "user", read_only)]
async fn wait_for_cancel(#[ctx] cancel: CancellationToken) -> &'static str {
    cancel.cancelled().await;
    "saw cancellation"
}

static HANDED_OUT: Mutex<Vec<CancellationToken>> = Mutex::new(Vec::new());

/// Hands its token out, as work it started that outlives the call would keep it (after
/// yielding once if asked, so that it finishes while raced against its timeout).
#[tool(permission = "user", read_only, timeout = "10s")]
async fn hand_out_token(#[ctx] cancel: CancellationToken, yield_first: bool) -> u8 {
    if yield_first {
        tokio::task::yield_now().await;
    }
    HANDED_OUT.lock().unwrap().push(cancel);
    0
}

/// Panics.
#[tool(permission = "user", read_only)]
async fn explode() -> u8 {
    panic!("boom")
}

/// Panics in a sync tool.
#[tool(permission = "user", read_only)]
fn explode_sync() -> u8 {
    panic!("sync boom")
}

/// Fails with a display error.
#[tool(permission = "user", read_only)]
fn fail_plain() -> Result<u8, String> {
    Err("the printer is out of paper".into())
}

/// Fails with its own code.
#[tool(permission = "user", read_only)]
fn fail_coded() -> Result<u8, ToolError> {
    Err(ToolError::new("not_found", "no such pet").with_details(json!({"id": 7})))
}

/// Reports its call id.
#[tool(permission = "user", read_only)]
fn whoami(#[ctx] call_id: CallId) -> String {
    call_id.to_string()
}

fn registry(parties: usize) -> Registry {
    Registry::builder()
        .roles(["user"])
        .state(Rendezvous(Barrier::new(parties)))
        .build()
        .unwrap()
}

fn user() -> Caller {
    Caller::new("u", "user")
}

fn codes(outcomes: &[ToolOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| match &o.result {
            Ok(_) => "ok".to_owned(),
            Err(error) => error.code.to_string(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_calls_of_a_batch_run_in_parallel() {
    let registry = registry(4);
    let calls = (0..4)
        .map(|i| ToolCall::new(format!("c{i}"), "meet", json!({"tag": format!("t{i}")})))
        .collect();
    let outcomes = registry.run_batch(&user(), calls).await;
    // Each call waits for all four at a barrier: this finishes only if they overlap.
    assert_eq!(codes(&outcomes), ["ok"; 4]);
    let ids: Vec<_> = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_is_bounded() {
    let registry = registry(4);
    let calls: Vec<_> = (0..4)
        .map(|i| ToolCall::new(format!("c{i}"), "meet", json!({"tag": "t"})))
        .collect();
    // With at most two calls at a time, four can never meet at the barrier. Had the limit
    // been ignored, all four would meet and succeed; instead they are still waiting (or not
    // started) when the batch is cancelled.
    let cancel = CancellationToken::new();
    let options = BatchOptions {
        cancel: Some(cancel.clone()),
        max_concurrency: Some(2),
        ..Default::default()
    };
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let outcomes = registry.run_batch_with(&user(), calls, options).await;
    canceller.await.unwrap();
    assert_eq!(codes(&outcomes), ["cancelled"; 4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn side_effecting_calls_run_one_at_a_time_in_call_order() {
    let registry = registry(1);
    let tags = ["w1", "r2", "w3", "w4", "r5", "w6"].map(|tag| format!("{ORDERED}{tag}"));
    let calls = tags
        .iter()
        .enumerate()
        .map(|(i, tag)| {
            let tool = if tag.contains("-w") { "write" } else { "read" };
            ToolCall::new(i.to_string(), tool, json!({ "tag": tag }))
        })
        .collect();
    let outcomes = registry.run_batch(&user(), calls).await;
    assert_eq!(codes(&outcomes), ["ok"; 6]);
    let logged: Vec<String> = LOG
        .lock()
        .unwrap()
        .iter()
        .filter(|tag| tag.starts_with(ORDERED))
        .cloned()
        .collect();
    assert_eq!(logged, tags);
    assert_eq!(MAX_ACTIVE_WRITES.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_mode_runs_writes_together() {
    let registry = registry(1);
    let calls = (0..8)
        .map(|i| ToolCall::new(i.to_string(), "write", json!({"tag": i.to_string()})))
        .collect();
    let options = BatchOptions {
        mode: Some(BatchMode::Parallel),
        ..Default::default()
    };
    let outcomes = registry.run_batch_with(&user(), calls, options).await;
    let results: Vec<_> = outcomes.iter().map(|o| o.result.clone().unwrap()).collect();
    assert_eq!(
        results,
        (0..8).map(|i| json!(i.to_string())).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_batch_yields_one_outcome_per_call_in_order() {
    let registry = registry(1);
    let calls = vec![
        ToolCall::new("a", "read", json!({"tag": "x"})),
        ToolCall::new("b", "read", json!({"tag": 5})),
        ToolCall::new("c", "no_such_tool", json!({})),
        ToolCall::new("d", "explode", json!({})),
        ToolCall::new("e", "hang", json!({})),
        ToolCall::new("f", "fail_plain", json!({})),
        ToolCall::new("g", "fail_coded", json!({})),
        ToolCall::new("h", "explode_sync", json!({})),
        ToolCall::new("i", "read", "not json"),
        ToolCall::new("j", "read", json!({"tag": "after everything"})),
    ];
    let outcomes = registry.run_batch(&user(), calls).await;
    assert_eq!(
        codes(&outcomes),
        [
            "ok",
            "invalid_arguments",
            "unknown_tool",
            "panicked",
            "timeout",
            "execution_failed",
            "not_found",
            "panicked",
            "invalid_arguments",
            "ok"
        ]
    );
    let ids: String = outcomes.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, "abcdefghij");
    let tools: Vec<_> = outcomes.iter().map(|o| o.tool.as_str()).collect();
    assert_eq!(tools[2], "no_such_tool");
    assert_eq!(
        outcomes[5].error().unwrap().message,
        "the printer is out of paper"
    );
    assert_eq!(outcomes[6].error().unwrap().details, Some(json!({"id": 7})));
    assert!(
        !outcomes[3].error().unwrap().message.contains("boom"),
        "panic text stays in the log"
    );
    assert!(outcomes[4].duration >= Duration::from_millis(50));
}

#[tokio::test]
async fn an_empty_batch_is_an_empty_answer() {
    assert!(registry(1).run_batch(&user(), Vec::new()).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_process_keeps_serving_after_panics() {
    let registry = registry(1);
    for _ in 0..20 {
        let outcome = registry
            .call(&user(), ToolCall::new("p", "explode", json!({})))
            .await;
        assert_eq!(outcome.error().unwrap().code, ErrorCode::Panicked);
    }
    let outcome = registry
        .call(
            &user(),
            ToolCall::new("ok", "read", json!({"tag": "still here"})),
        )
        .await;
    assert_eq!(outcome.result.unwrap(), "still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_sync_tool_times_out_and_is_told_to_stop() {
    let registry = registry(1);
    let outcome = registry
        .call(&user(), ToolCall::new("s", "spin", json!({})))
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(
        error.message,
        "the tool did not finish within its time limit of 50ms; try a smaller request, or try again later"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_default_timeout_applies_to_tools_without_their_own() {
    let registry = Registry::builder()
        .roles(["user"])
        .state(Rendezvous(Barrier::new(2)))
        .default_timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    // `wait_for_cancel` sets no timeout: the default ends it, and it is told to stop.
    let outcome = registry
        .call(&user(), ToolCall::new("w", "wait_for_cancel", json!({})))
        .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::Timeout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_can_cancel_a_running_call() {
    let registry = registry(1);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let call = tokio::spawn({
        let registry = registry.clone();
        async move {
            registry
                .call_with_cancel(
                    &user(),
                    ToolCall::new("w", "wait_for_cancel", json!({})),
                    cancel,
                )
                .await
        }
    });
    tokio::task::yield_now().await;
    trigger.cancel();
    let outcome = call.await.unwrap();
    assert_eq!(outcome.error().unwrap().code, ErrorCode::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_batch_still_answers_every_call() {
    let registry = registry(1);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let calls = (0..5)
        .map(|i| ToolCall::new(i.to_string(), "read", json!({"tag": "t"})))
        .collect();
    let options = BatchOptions {
        cancel: Some(cancel),
        ..Default::default()
    };
    let outcomes = registry.run_batch_with(&user(), calls, options).await;
    assert_eq!(codes(&outcomes), ["cancelled"; 5]);
    assert_eq!(
        outcomes[0].error().unwrap().message,
        "the call was cancelled before it started"
    );
}

#[tokio::test]
async fn tools_receive_their_call_id() {
    let registry = registry(1);
    let outcome = registry
        .call(&user(), ToolCall::new("call_abc", "whoami", json!({})))
        .await;
    assert_eq!(outcome.result.unwrap(), "call_abc");
}

#[tokio::test]
async fn outcomes_serialize_for_transport() {
    let registry = registry(1);
    let outcome = registry
        .call(&user(), ToolCall::new("x", "fail_coded", json!({})))
        .await;
    let value = serde_json::to_value(&outcome).unwrap();
    assert_eq!(value["call_id"], "x");
    assert_eq!(value["tool"], "fail_coded");
    assert_eq!(value["result"]["Err"]["code"], "not_found");
    assert!(value["duration_ms"].is_number());
}

#[tokio::test]
async fn a_tool_that_finishes_keeps_its_token_uncancelled() {
    let registry = registry(1);
    for yield_first in [false, true] {
        let arguments = json!({ "yield_first": yield_first });
        let outcome = registry
            .call(&user(), ToolCall::new("t", "hand_out_token", arguments))
            .await;
        assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    }
    let tokens = HANDED_OUT.lock().unwrap();
    assert_eq!(tokens.len(), 2);
    // Cancelled when the call is cancelled or times out, not when it ends well: work the
    // tool left running is not told to stop.
    assert!(tokens.iter().all(|token| !token.is_cancelled()));
}
