//! Load over loopback: `POST /tools/call` through toolgate's router (auth, parsing, role
//! lookup, schema validation, policy, history, outcome) against a bare axum handler calling
//! the same function, in the same run. Each iteration sends 256 requests, 32 at a time, over
//! kept-alive connections; criterion reports requests per second.
//!
//! `cargo bench -p toolgate-examples --bench http_load`

mod common;

use common::{BARE_BODY, BARE_PATH, TOOL_BODY, router, serve};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::stream::{self, StreamExt};

const REQUESTS: usize = 256;
const CONCURRENCY: usize = 32;

async fn load(client: &reqwest::Client, url: &str, body: &str) {
    stream::iter(0..REQUESTS)
        .map(|_| async {
            let response = client
                .post(url)
                .header("content-type", "application/json")
                .body(body.to_owned())
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success());
            response.bytes().await.unwrap();
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<()>>()
        .await;
}

fn http_load(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let directory =
        std::env::temp_dir().join(format!("toolgate-http-bench-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let base = serve(&runtime, router(&directory.join("clinic.db")));
    let client = reqwest::Client::new();
    let mut group = c.benchmark_group("http_256_requests_32_concurrent");
    group.throughput(Throughput::Elements(REQUESTS as u64));
    group.sample_size(20);
    let bare_url = format!("{base}{BARE_PATH}");
    group.bench_function("bare_axum_handler", |b| {
        b.to_async(&runtime)
            .iter(|| load(&client, &bare_url, BARE_BODY))
    });
    let tool_url = format!("{base}/tools/call");
    group.bench_function("toolgate_tools_call", |b| {
        b.to_async(&runtime)
            .iter(|| load(&client, &tool_url, TOOL_BODY))
    });
    group.finish();
    let _ = std::fs::remove_dir_all(directory);
}

criterion_group!(benches, http_load);
criterion_main!(benches);
