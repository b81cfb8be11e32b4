//! What keeping state costs per call: one call with a per-caller rate limit and its audit
//! record, with every store kind, against the in-memory default and the JSON Lines sink, in
//! one run; and calls per second through two instances sharing one PostgreSQL database.
//!
//! `cargo bench -p toolgate --features sqlite,postgres --bench store_cost` (PostgreSQL's
//! server binaries must be installed; the bench starts its own server on 127.0.0.1).

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::json;
use std::hint::black_box;
use toolgate::audit::JsonlFileSink;
use toolgate::prelude::*;
use toolgate::rate_limits::RateLimit;
use toolgate::store::Stores;
use toolgate_test_support::TempPostgres;

/// Add two numbers.
#[tool(permission = "public", read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn builder() -> toolgate::RegistryBuilder {
    // A budget no bench exhausts: the cost of checking it is what is measured.
    let limit = RateLimit::new(u32::MAX, Duration::from_secs(1));
    Registry::builder()
        .roles(["public"])
        .rate_limit_per_caller(limit)
}

fn per_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let server = TempPostgres::start();
    let postgres = server.new_database();
    let sqlite = format!("sqlite:{}", folder.path().join("state.db").display());
    let registries = runtime.block_on(async {
        let jsonl = JsonlFileSink::open(folder.path().join("audit.jsonl")).unwrap();
        vec![
            ("memory", builder().build().unwrap()),
            (
                "memory_and_jsonl_sink",
                builder().audit_sink(jsonl).build().unwrap(),
            ),
            ("sqlite", with(&sqlite).await),
            ("postgres", with(&postgres).await),
        ]
    });
    let caller = Caller::new("bench", "public");
    let mut group = c.benchmark_group("store_cost_per_call");
    for (name, registry) in &registries {
        group.bench_function(*name, |b| {
            b.to_async(&runtime).iter(|| async {
                let call = ToolCall::new("1", "add", black_box(json!({"a": 20, "b": 22})));
                black_box(registry.call(&caller, call).await.result.unwrap())
            })
        });
    }
    group.finish();

    let (a, b) = runtime.block_on(async { (with(&postgres).await, with(&postgres).await) });
    let mut group = c.benchmark_group("two_instances_one_postgres");
    group.sample_size(10);
    group.bench_function("1000_calls_32_at_a_time", |bench| {
        bench.to_async(&runtime).iter(|| async {
            let calls = futures::stream::iter(0..1000).map(|index| {
                let registry = if index % 2 == 0 { &a } else { &b };
                let caller = Caller::new(format!("caller-{}", index % 8), "public");
                async move {
                    let call = ToolCall::new("1", "add", json!({"a": index, "b": 1}));
                    registry.call(&caller, call).await.result.unwrap()
                }
            });
            black_box(calls.buffer_unordered(32).collect::<Vec<_>>().await)
        })
    });
    group.finish();
    drop(server);
}

async fn with(address: &str) -> Registry {
    let stores = Stores::open(address).await.unwrap();
    builder().stores(&stores).build().unwrap()
}

criterion_group!(benches, per_call);
criterion_main!(benches);
