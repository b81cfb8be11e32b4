//! One small call — JSON text → typed arguments → function → JSON result — through toolgate's
//! registry, through rmcp's `ToolRouter`, and hand-written (`serde_json::from_str` into a
//! struct, a direct call, `serde_json::to_value`: the floor), for a two-integer tool (`add`)
//! and a three-parameter one with strings and a list (`search`). Then a 1,000-call batch
//! against a loop of single calls, and what policy and audit cost. Every side runs in the
//! same process, on the same runtime, in the same run; the overhead of a row is its time
//! less the floor's.
//!
//! `cargo bench -p toolgate --bench call_overhead`

mod common;

use common::{ADD, Rmcp, SEARCH, floor_add, floor_search, registries};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use std::hint::black_box;
use toolgate::prelude::*;

fn single_calls(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let rmcp = runtime.block_on(Rmcp::connect());
    let (default, history_off) = registries();
    let caller = Caller::new("bench", "public");
    type Floor = fn(&'static str) -> std::pin::Pin<Box<dyn Future<Output = Value>>>;
    let tools: [(&'static str, &'static str, Floor); 2] = [
        ("add", ADD, |arguments| Box::pin(floor_add(arguments))),
        ("search", SEARCH, |arguments| {
            Box::pin(floor_search(arguments))
        }),
    ];
    for (tool, arguments, floor) in tools {
        let mut group = c.benchmark_group(tool);
        group.bench_function("floor", |b| {
            b.to_async(&runtime)
                .iter(|| async { black_box(floor(black_box(arguments)).await) })
        });
        group.bench_function("rmcp_router", |b| {
            b.to_async(&runtime)
                .iter(|| async { black_box(rmcp.call(tool, black_box(arguments)).await) })
        });
        for (name, registry) in [
            ("toolgate_default", &default),
            ("toolgate_history_off", &history_off),
        ] {
            group.bench_function(name, |b| {
                b.to_async(&runtime).iter(|| async {
                    let outcome = registry
                        .call(&caller, ToolCall::new("1", tool, black_box(arguments)))
                        .await;
                    black_box(outcome.result.unwrap())
                })
            });
        }
        group.finish();
    }
}

fn batch_of_1000(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = Registry::builder().roles(["public"]).build().unwrap();
    let caller = Caller::new("bench", "public");
    let mut group = c.benchmark_group("batch_1000");
    group.sample_size(20);
    group.bench_function("floor_loop", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut results = Vec::with_capacity(1000);
            for _ in 0..1000 {
                results.push(floor_add(black_box(ADD)).await);
            }
            black_box(results)
        })
    });
    group.bench_function("toolgate_single_calls_loop", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut results = Vec::with_capacity(1000);
            for i in 0..1000 {
                let call = ToolCall::new(i.to_string(), "add", ADD);
                results.push(registry.call(&caller, call).await);
            }
            black_box(results)
        })
    });
    group.bench_function("toolgate_run_batch", |b| {
        b.to_async(&runtime).iter(|| async {
            let calls = (0..1000)
                .map(|i| ToolCall::new(i.to_string(), "add", ADD))
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
                    .call(&caller, ToolCall::new("1", "add", black_box(ADD)))
                    .await;
                black_box(outcome.result.unwrap())
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_file(log);
}

criterion_group!(benches, single_calls, batch_of_1000, policy_and_audit);
criterion_main!(benches);
