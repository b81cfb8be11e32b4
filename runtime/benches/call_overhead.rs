//! One small-argument call through the registry against a hand-written baseline
//! (`serde_json::from_str` into a struct, a direct call, `serde_json::to_value`), and a
//! 1,000-call batch against the same baseline in a loop. Both sides run in the same
//! process, on the same runtime.
//!
//! `cargo bench -p toolgate --bench call_overhead`

use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use serde_json::{Value, json};
use std::hint::black_box;
use toolgate::prelude::*;

/// Add two numbers.
#[tool(permission = "public", read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[derive(Deserialize)]
struct AddArguments {
    a: i64,
    b: i64,
}

async fn add_directly(a: i64, b: i64) -> i64 {
    a + b
}

/// What a careful hand-written tool call does: parse, call, serialize.
async fn baseline(arguments: &str) -> Value {
    let parsed: AddArguments = serde_json::from_str(arguments).unwrap();
    serde_json::to_value(add_directly(parsed.a, parsed.b).await).unwrap()
}

const ARGUMENTS: &str = r#"{"a": 20, "b": 22}"#;

fn single_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = Registry::builder().roles(["public"]).build().unwrap();
    let caller = Caller::new("bench", "public");
    let mut group = c.benchmark_group("single_call");
    group.bench_function("baseline_from_str_call_to_value", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(baseline(black_box(ARGUMENTS)).await) })
    });
    group.bench_function("registry_call", |b| {
        b.to_async(&runtime).iter(|| async {
            let outcome = registry
                .call(&caller, ToolCall::new("1", "add", black_box(ARGUMENTS)))
                .await;
            black_box(outcome.result.unwrap())
        })
    });
    group.bench_function("registry_call_value_arguments", |b| {
        b.to_async(&runtime).iter(|| async {
            let outcome = registry
                .call(
                    &caller,
                    ToolCall::new("1", "add", json!({"a": 20, "b": 22})),
                )
                .await;
            black_box(outcome.result.unwrap())
        })
    });
    group.finish();
}

fn batch_of_1000(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = Registry::builder().roles(["public"]).build().unwrap();
    let caller = Caller::new("bench", "public");
    let mut group = c.benchmark_group("batch_1000");
    group.sample_size(20);
    group.bench_function("baseline_loop", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut results = Vec::with_capacity(1000);
            for _ in 0..1000 {
                results.push(baseline(black_box(ARGUMENTS)).await);
            }
            black_box(results)
        })
    });
    group.bench_function("registry_run_batch", |b| {
        b.to_async(&runtime).iter(|| async {
            let calls = (0..1000)
                .map(|i| ToolCall::new(i.to_string(), "add", ARGUMENTS))
                .collect();
            black_box(registry.run_batch(&caller, calls).await)
        })
    });
    group.finish();
}

/// Policy and audit on top of the bare executor: the same call with the policy set to
/// `Auto` and no audit at all, with the default policy and the in-memory history, and with
/// a hash-chained JSON Lines file and `tracing` events besides.
fn policy_and_audit(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let caller = Caller::new("bench", "public");
    let log =
        std::env::temp_dir().join(format!("toolgate-bench-audit-{}.jsonl", std::process::id()));
    let bare = Registry::builder()
        .roles(["public"])
        .policy_mode(toolgate::policy::PolicyMode::Auto)
        .history_capacity(0)
        .build()
        .unwrap();
    let defaults = Registry::builder().roles(["public"]).build().unwrap();
    let full = Registry::builder()
        .roles(["public"])
        .audit_sink(toolgate::audit::JsonlFileSink::open(&log).unwrap())
        .audit_sink(toolgate::audit::TracingSink)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("policy_and_audit");
    for (name, registry) in [
        ("bare_executor", &bare),
        ("policy_and_history", &defaults),
        ("policy_history_jsonl_tracing", &full),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let outcome = registry
                    .call(&caller, ToolCall::new("1", "add", black_box(ARGUMENTS)))
                    .await;
                black_box(outcome.result.unwrap())
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_file(log);
}

criterion_group!(benches, single_call, batch_of_1000, policy_and_audit);
criterion_main!(benches);
