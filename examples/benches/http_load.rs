//! Load over loopback: `POST /tools/call` through toolgate's router (auth, parsing, role
//! lookup, schema validation, policy, history, outcome) against a bare axum handler calling
//! the same function, in the same run. Each iteration sends 256 requests, 32 at a time, over
//! kept-alive connections; criterion reports requests per second.
//!
//! `cargo bench -p toolgate-examples --bench http_load`

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::routing::post;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::stream::{self, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_examples::clinic::{Clinic, Weekday, agent, app, hours_for, model_from_env, registry};

const REQUESTS: usize = 256;
const CONCURRENCY: usize = 32;

#[derive(Deserialize)]
struct HoursArguments {
    day: Option<Weekday>,
}

/// What a hand-written endpoint for the same function does.
async fn bare_hours(Json(arguments): Json<HoursArguments>) -> Json<Value> {
    let day = arguments.day.unwrap_or(Weekday::Monday);
    Json(json!([{"day": day, "hours": hours_for(day)}]))
}

fn start(runtime: &tokio::runtime::Runtime, database: &std::path::Path) -> String {
    let clinic = Arc::new(Clinic::open(database).unwrap());
    let registry = registry(Arc::clone(&clinic)).unwrap();
    let tools = app(agent(registry, model_from_env()), clinic);
    let router = tools.route("/bare/hours", post(bare_hours));
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        base
    })
}

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
    let base = start(&runtime, &directory.join("clinic.db"));
    let client = reqwest::Client::new();
    let mut group = c.benchmark_group("http_256_requests_32_concurrent");
    group.throughput(Throughput::Elements(REQUESTS as u64));
    group.sample_size(20);
    let bare_url = format!("{base}/bare/hours");
    group.bench_function("bare_axum_handler", |b| {
        b.to_async(&runtime)
            .iter(|| load(&client, &bare_url, r#"{"day": "saturday"}"#))
    });
    let tool_url = format!("{base}/tools/call");
    let call = r#"{"name": "get_clinic_hours", "arguments": {"day": "saturday"}}"#;
    group.bench_function("toolgate_tools_call", |b| {
        b.to_async(&runtime).iter(|| load(&client, &tool_url, call))
    });
    group.finish();
    let _ = std::fs::remove_dir_all(directory);
}

criterion_group!(benches, http_load);
criterion_main!(benches);
