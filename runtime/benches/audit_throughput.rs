//! Audit appends per second through two instances on one PostgreSQL, 32 in flight, beside
//! `pgbench` running the equivalent write (lock the chain's head, insert the record, move the
//! head) on the same server in the same sitting: as one pipelined transaction and as
//! separate statements. Rounds are interleaved (two cores are shared by PostgreSQL, pgbench
//! and the instances, so single runs are noisy); medians and ranges are reported, with the
//! ratio to pipelined pgbench. Also calls per second through two registries (each call: a
//! record before it runs and one when it ends), and through two registries (on a database
//! of their own) on each of which someone follows the events, so each call's event is also
//! written to the shared event log.
//!
//! `cargo bench -p toolgate --features postgres --bench audit_throughput` (PostgreSQL's
//! binaries, pgbench among them, must be installed; the bench starts its own server).

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use toolgate::audit::{AuditRecord, AuditStore};
use toolgate::prelude::*;
use toolgate::store::postgres::PostgresStore;
use toolgate_test_support::TempPostgres;

const IN_FLIGHT: usize = 32;
const APPENDS: usize = 6_000;
const CALLS: usize = 3_000;
const ROUNDS: usize = 5;
const PGBENCH_SECONDS: u32 = 4;

/// Add two numbers.
#[tool(permission = "public", read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn record(index: usize) -> AuditRecord {
    AuditRecord {
        time_ms: 1_764_000_000_000 + index as u64,
        caller: format!("caller-{}", index % 8),
        issuer: None,
        role: "public".into(),
        tool: "add".into(),
        call_id: format!("call-{index}"),
        arguments: json!({"a": index, "b": 1}),
        decision: "allow".into(),
        approver: None,
        outcome: "ok".into(),
        duration_ms: 0.012,
    }
}

/// The write pgbench runs: what an append does, in SQL, with a body as long as a record's
/// (letters only: pgbench reads `:name` in a script as a variable).
fn script(pipelined: bool) -> String {
    let body = "x".repeat(serde_json::to_string(&record(0)).unwrap().len());
    let (open, close) = match pipelined {
        true => ("\\startpipeline\n", "\\endpipeline\n"),
        false => ("", ""),
    };
    format!(
        "\\set caller random(0, 7)\n{open}BEGIN;\n\
         SELECT next_seq, hash FROM toolgate_audit_head WHERE id = 1 FOR UPDATE;\n\
         INSERT INTO toolgate_audit (seq, caller, body, hash) SELECT next_seq, 'caller-' || :caller, '{body}', encode(sha256(convert_to(hash || '{body}', 'UTF8')), 'hex') FROM toolgate_audit_head WHERE id = 1;\n\
         UPDATE toolgate_audit_head SET next_seq = next_seq + 1, hash = encode(sha256(convert_to(hash, 'UTF8')), 'hex') WHERE id = 1;\n\
         COMMIT;\n{close}"
    )
}

/// Appends per second, `IN_FLIGHT` at a time, spread over the two stores.
async fn appends_per_second(stores: &[PostgresStore; 2], round: usize) -> f64 {
    let started = Instant::now();
    let appends = futures::stream::iter(0..APPENDS).map(|index| {
        let store = &stores[index % 2];
        async move { store.append(record(round * APPENDS + index)).await.unwrap() }
    });
    appends
        .buffer_unordered(IN_FLIGHT)
        .collect::<Vec<()>>()
        .await;
    APPENDS as f64 / started.elapsed().as_secs_f64()
}

/// Calls per second through two registries, `IN_FLIGHT` at a time.
async fn calls_per_second(registries: &[Registry; 2]) -> f64 {
    let started = Instant::now();
    let calls = futures::stream::iter(0..CALLS).map(|index| {
        let registry = &registries[index % 2];
        let caller = Caller::new(format!("caller-{}", index % 8), "public");
        async move {
            let call = ToolCall::new("1", "add", json!({"a": index, "b": 1}));
            registry.call(&caller, call).await.result.unwrap()
        }
    });
    calls.buffer_unordered(IN_FLIGHT).collect::<Vec<_>>().await;
    CALLS as f64 / started.elapsed().as_secs_f64()
}

fn median_and_range(mut values: Vec<f64>) -> String {
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    format!(
        "{median:>8.0}  ({:.0}–{:.0})",
        values[0],
        values[values.len() - 1]
    )
}

/// A registry on `store`'s database.
fn registry(store: &PostgresStore) -> Registry {
    Registry::builder()
        .roles(["public"])
        .stores(&store.stores())
        .build()
        .unwrap()
}

/// Two stores of `ours` (for appends), two registries on them, and two on `watched` on
/// each of which someone follows the events.
async fn instances(
    ours: &str,
    watched: &str,
) -> ([PostgresStore; 2], [Registry; 2], [Registry; 2]) {
    let a = PostgresStore::connect(ours).await.unwrap();
    let b = PostgresStore::connect(ours).await.unwrap();
    let registries = [registry(&a), registry(&b)];
    let c = PostgresStore::connect(watched).await.unwrap();
    let d = PostgresStore::connect(watched).await.unwrap();
    let followed = [registry(&c), registry(&d)];
    for registry in &followed {
        let mut events = registry.events();
        tokio::spawn(
            async move { while !matches!(events.recv().await, Err(RecvError::Closed)) {} },
        );
    }
    ([a, b], registries, followed)
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = TempPostgres::start();
    let ours = server.new_database();
    let theirs = server.new_database();
    let watched_database = server.new_database();
    let (stores, registries, watched) = runtime.block_on(async {
        // The pgbench database gets the same tables.
        PostgresStore::connect(&theirs).await.unwrap();
        instances(&ours, &watched_database).await
    });
    let (mut appends, mut pipelined, mut plain, mut calls, mut ratios) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut watched_calls = Vec::new();
    for round in 0..ROUNDS {
        let ours = runtime.block_on(appends_per_second(&stores, round));
        let piped = server.pgbench(&theirs, &script(true), IN_FLIGHT as u32, PGBENCH_SECONDS);
        let separate = server.pgbench(&theirs, &script(false), IN_FLIGHT as u32, PGBENCH_SECONDS);
        calls.push(runtime.block_on(calls_per_second(&registries)));
        watched_calls.push(runtime.block_on(calls_per_second(&watched)));
        println!(
            "round {round}: toolgate {ours:.0} appends/s, pgbench pipelined {piped:.0} tps, separate statements {separate:.0} tps"
        );
        ratios.push(ours / piped);
        appends.push(ours);
        pipelined.push(piped);
        plain.push(separate);
        std::thread::sleep(Duration::from_millis(200));
    }
    let verified = runtime.block_on(stores[0].verify()).unwrap();
    assert!(verified.is_ok(), "the chain verifies: {verified:?}");
    println!(
        "\nrow                                   median  (range), {ROUNDS} rounds, {IN_FLIGHT} in flight"
    );
    println!(
        "toolgate appends/s, two instances   {}",
        median_and_range(appends)
    );
    println!(
        "pgbench pipelined transaction tps   {}",
        median_and_range(pipelined)
    );
    println!(
        "pgbench separate statements tps     {}",
        median_and_range(plain)
    );
    println!("toolgate / pipelined pgbench        {}", {
        let mut ratios = ratios;
        ratios.sort_by(f64::total_cmp);
        format!(
            "{:>8.2}  ({:.2}–{:.2})",
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        )
    });
    println!(
        "toolgate calls/s, two registries    {}  (2 records and a rate-limit-free call each)",
        median_and_range(calls)
    );
    println!(
        "  the same, events followed on both {}  (and each call's event in the shared log)",
        median_and_range(watched_calls)
    );
    drop(server);
}
