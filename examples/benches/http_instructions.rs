//! Instructions per HTTP request, counted by valgrind's callgrind: `POST /tools/call` against
//! a bare axum handler calling the same function, for each of the HTTP benches' tools
//! (the clinic's hours, `add`, `search`), both through the
//! same router in process (no sockets, so the count is the request's own work: routing,
//! extractors, the call, the response). Stable where timings are not; `http_wrk` measures
//! the rate over real connections.
//!
//! `cargo bench -p toolgate-examples --bench http_instructions` (needs `valgrind`)
//!
//! Run by itself with `<row> <count>`, it answers that many requests and exits (what
//! callgrind counts, from where its requests begin). Each row runs N and 2N requests, and
//! reports the difference over N, so what the first request builds cancels out.

#[path = "../../runtime/benches/common/callgrind.rs"]
mod callgrind;
mod common;

use axum::body::Body;
use axum::http::{Request, header};
use common::Workload;
use tower::ServiceExt;

const REQUESTS: u64 = 1_000;

fn main() {
    match callgrind::counted_run() {
        Some((row, count)) => serve(&row, count),
        None => report(),
    }
}

fn report() {
    let program = std::env::current_exe().expect("the bench's own path");
    for workload in &common::WORKLOADS {
        let [bare, toolgate] = ["bare", "toolgate"]
            .map(|target| callgrind::per_call(&program, &row(workload, target), REQUESTS));
        println!(
            "{}: instructions per request: bare axum handler {bare}, toolgate /tools/call {toolgate} ({:.2}×)",
            workload.name,
            toolgate as f64 / bare as f64
        );
    }
}

/// A row's name: the tool, and which endpoint calls it.
fn row(workload: &Workload, target: &str) -> String {
    format!("{}/{target}", workload.name)
}

/// Answers `count` requests of `row` on a single-threaded runtime.
fn serve(row: &str, count: u64) {
    let (name, target) = row.split_once('/').expect("a row is `tool/target`");
    let workload = Workload::named(name).expect("a known tool");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let directory = tempfile::tempdir().unwrap();
    let router = workload.router(&directory.path().join("clinic.db"));
    let (path, body) = workload.request(target);
    callgrind::counting_starts();
    runtime.block_on(async {
        for _ in 0..count {
            let request = Request::post(path)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body))
                .unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            assert!(
                response.status().is_success(),
                "{row}: {}",
                response.status()
            );
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            std::hint::black_box(bytes);
        }
    });
}
