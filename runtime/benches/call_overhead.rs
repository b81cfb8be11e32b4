//! One small call — JSON text → typed arguments → function → JSON result — through toolgate's
//! registry, through rmcp's `ToolRouter`, and hand-written (`serde_json::from_str` into a
//! struct, a direct call, `serde_json::to_value`: the floor), for a two-integer tool (`add`)
//! and a three-parameter one with strings and a list (`search`); toolgate's calls borrow
//! their names as rmcp's request does, and a row of its own copies them. Then a 1,000-call
//! batch against a loop of single calls, what policy and audit cost, and `add` called from
//! two threads at once (what calls on different cores cost each other). Every side runs in
//! the same process, on the same runtime, in the same run; the overhead of a row is its
//! time less the floor's.
//!
//! `cargo bench -p toolgate --bench call_overhead`

mod common;

use common::{ADD, Rmcp, SEARCH, call_copying_names, call_to, floor_add, floor_search, registries};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use std::hint::black_box;
use toolgate::prelude::*;

fn single_calls(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let rmcp = runtime.block_on(Rmcp::connect());
    let (default, history_off) = registries();
    let caller = Caller::new("bench", "public");
    let sides = Sides {
        runtime: &runtime,
        rmcp: &rmcp,
        caller: &caller,
        default: &default,
        history_off: &history_off,
    };
    // Each tool's floor is called directly, as its other rows call theirs (not boxed, nor
    // through one pointer for both tools).
    sides.group(c, "add", ADD, floor_add);
    sides.group(c, "search", SEARCH, floor_search);
}

/// What the single-call rows call, built once.
struct Sides<'a> {
    runtime: &'a tokio::runtime::Runtime,
    rmcp: &'a Rmcp,
    caller: &'a Caller,
    default: &'a Registry,
    history_off: &'a Registry,
}

impl Sides<'_> {
    /// The rows of `tool`, called with `arguments`; `floor` is its hand-written floor.
    fn group<F: Future<Output = Value>>(
        &self,
        c: &mut Criterion,
        tool: &'static str,
        arguments: &'static str,
        floor: impl Fn(&'static str) -> F,
    ) {
        let runtime = self.runtime;
        let mut group = c.benchmark_group(tool);
        group.bench_function("floor", |b| {
            b.to_async(runtime)
                .iter(|| async { black_box(floor(black_box(arguments)).await) })
        });
        group.bench_function("rmcp_router", |b| {
            b.to_async(runtime)
                .iter(|| async { black_box(self.rmcp.call(tool, black_box(arguments)).await) })
        });
        let row = Row {
            sides: self,
            tool,
            arguments,
        };
        // Each row makes its call with a function of its own, called directly (as the
        // other rows make their requests), not through one pointer for all rows.
        row.bench(&mut group, "toolgate_default", self.default, call_to);
        row.bench(
            &mut group,
            "toolgate_history_off",
            self.history_off,
            call_to,
        );
        row.bench(
            &mut group,
            "toolgate_names_copied",
            self.default,
            call_copying_names,
        );
        group.finish();
    }
}

/// What toolgate's single-call rows of a tool share.
struct Row<'a> {
    sides: &'a Sides<'a>,
    tool: &'static str,
    arguments: &'static str,
}

impl Row<'_> {
    /// The row `name`: calls made by `make_call`, to `registry`.
    fn bench(
        &self,
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        name: &str,
        registry: &Registry,
        make_call: impl Fn(&'static str, &str) -> ToolCall,
    ) {
        let Row {
            sides,
            tool,
            arguments,
        } = *self;
        let (runtime, caller) = (sides.runtime, sides.caller);
        group.bench_function(name, |b| {
            b.to_async(runtime).iter(|| async {
                let call = make_call(tool, black_box(arguments));
                let outcome = registry.call(caller, call).await;
                black_box(outcome.result.unwrap())
            })
        });
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
                let outcome = registry.call(&caller, call_to("add", black_box(ADD))).await;
                black_box(outcome.result.unwrap())
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_file(log);
}

/// `add` from two threads at once, each on a runtime of its own (the same two threads for
/// every sample, as a server's workers are): one iteration is a call on each thread, so a
/// row's time is what a call costs while another core is calling too.
fn two_threads(c: &mut Criterion) {
    let (default, history_off) = registries();
    let mut group = c.benchmark_group("add_on_two_threads");
    let floor = TwoThreads::new(|runtime, iterations| {
        runtime.block_on(async {
            for _ in 0..iterations {
                black_box(floor_add(black_box(ADD)).await);
            }
        })
    });
    group.bench_function("floor", |b| {
        b.iter_custom(|iterations| floor.run(iterations))
    });
    for (name, registry) in [
        ("toolgate_default", default),
        ("toolgate_history_off", history_off),
    ] {
        let caller = Caller::new("bench", "public");
        let threads = TwoThreads::new(move |runtime, iterations| {
            runtime.block_on(async {
                for _ in 0..iterations {
                    let call = call_to("add", black_box(ADD));
                    black_box(registry.call(&caller, call).await.result.unwrap());
                }
            })
        });
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| threads.run(iterations))
        });
    }
    group.finish();
}

/// Two threads that make calls when told how many.
struct TwoThreads {
    jobs: Vec<std::sync::mpsc::Sender<u64>>,
    spans: std::sync::mpsc::Receiver<(std::time::Instant, std::time::Instant)>,
}

impl TwoThreads {
    /// Threads that run `calls(runtime, count)` on a runtime of their own when told a count.
    fn new(calls: impl Fn(&tokio::runtime::Runtime, u64) + Clone + Send + 'static) -> Self {
        let (span_sender, spans) = std::sync::mpsc::channel();
        let jobs = (0..2)
            .map(|_| {
                let (job_sender, job_receiver) = std::sync::mpsc::channel::<u64>();
                let (calls, span_sender) = (calls.clone(), span_sender.clone());
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .unwrap();
                    // Ends when the bench drops its `TwoThreads`.
                    for iterations in job_receiver {
                        let began = std::time::Instant::now();
                        calls(&runtime, iterations);
                        let _ = span_sender.send((began, std::time::Instant::now()));
                    }
                });
                job_sender
            })
            .collect();
        TwoThreads { jobs, spans }
    }

    /// The time from the first thread's start to the last one's end, `iterations` calls each.
    fn run(&self, iterations: u64) -> std::time::Duration {
        for job in &self.jobs {
            job.send(iterations).expect("the bench's threads run");
        }
        let spans: Vec<_> = self
            .jobs
            .iter()
            .map(|_| self.spans.recv().unwrap())
            .collect();
        let began = spans.iter().map(|span| span.0).min();
        let ended = spans.iter().map(|span| span.1).max();
        began
            .zip(ended)
            .map_or_else(Default::default, |(began, ended)| ended - began)
    }
}

criterion_group!(
    benches,
    single_calls,
    batch_of_1000,
    policy_and_audit,
    two_threads
);
criterion_main!(benches);
