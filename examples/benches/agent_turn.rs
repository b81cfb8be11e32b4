//! What the agent loop itself costs: a run of two model turns (one tool call, then the
//! answer), with the model answered in process and by a loopback HTTP server speaking Chat
//! Completions, against calling `run_batch` directly with the same call.
//!
//! `cargo bench -p toolgate-examples --bench agent_turn`

use std::hint::black_box;
use std::net::SocketAddr;

use axum::Json;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolgate::agent::models::OpenAiChat;
use toolgate::agent::{Agent, Message, Model, ModelCall, ModelFuture, ModelReply, ModelRequest};
use toolgate::{Caller, FnTool, Registry, ToolCall, ToolDefinition};

fn registry() -> Registry {
    let mut definition = ToolDefinition::new(
        "lookup_pet",
        "Look up a pet.",
        "public",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    );
    definition.hints.read_only = true;
    let tool = FnTool::new(definition, |_, arguments| async move {
        Ok(json!({"pet": arguments["name"], "species": "dog"}))
    });
    Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(tool)
        .build()
        .unwrap()
}

/// Calls the tool after the user's message, answers after its result.
struct InProcess;

impl Model for InProcess {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        let reply = match request.messages.last() {
            Some(Message::User { .. }) => ModelReply {
                calls: vec![ModelCall {
                    id: "c1".into(),
                    name: "lookup_pet".into(),
                    arguments: r#"{"name": "Rex"}"#.into(),
                }],
                ..ModelReply::default()
            },
            _ => ModelReply {
                text: Some("Rex is a dog.".into()),
                ..ModelReply::default()
            },
        };
        Box::pin(async move { Ok(reply) })
    }
}

/// The same script over HTTP, as Chat Completions.
async fn loopback_model() -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|Json(body): Json<Value>| async move {
            let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
            let message = if last.is_some_and(|m| m["role"] == "tool") {
                json!({"role": "assistant", "content": "Rex is a dog."})
            } else {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup_pet", "arguments": "{\"name\": \"Rex\"}"}}]})
            };
            Json(json!({"choices": [{"index": 0, "message": message}]}))
        }),
    );
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn agent_turn(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let caller = Caller::new("bench", "public");
    let registry = registry();
    let in_process = Agent::builder(registry.clone(), InProcess).build();
    let base = runtime.block_on(loopback_model());
    let over_http = Agent::builder(registry.clone(), OpenAiChat::new(base, "bench")).build();

    let mut group = c.benchmark_group("agent_turn");
    group.bench_function("run_batch_directly", |b| {
        b.to_async(&runtime).iter(|| async {
            let call = ToolCall::new("c1", "lookup_pet", r#"{"name": "Rex"}"#);
            black_box(registry.run_batch(&caller, vec![call]).await)
        })
    });
    group.bench_function("agent_run_in_process_model", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(in_process.run(&caller, "What is Rex?").await.unwrap()) })
    });
    group.bench_function("agent_run_loopback_http_model", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(over_http.run(&caller, "What is Rex?").await.unwrap()) })
    });
    group.finish();
}

criterion_group!(benches, agent_turn);
criterion_main!(benches);
