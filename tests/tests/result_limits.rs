//! Every content result is bounded, whatever its blocks: a huge image, a hundred thousand
//! small blocks, a long embedded file or sound. What each front end sends (the library's
//! outcome, HTTP, MCP, an agent's transcript) stays within its limits, and a closing note
//! says what was left out.

mod agent;

use agent::{Scripted, calls, text};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use toolgate::agent::{Agent, Message};
use toolgate::content::Content;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
use toolgate::{FnTool, ResultLimits, ToolDefinition};
use toolgate_tests::connect_in_memory;
use tower::ServiceExt;

const MIB: usize = 1024 * 1024;

/// A tool returning `blocks()` as its content.
fn content_tool(name: &str, blocks: impl Fn() -> Vec<Content> + Send + Sync + 'static) -> FnTool {
    let mut definition = ToolDefinition::new(
        name,
        "Returns content.",
        "public",
        json!({"type": "object", "properties": {}}),
    );
    definition.returns_content = true;
    let blocks = std::sync::Arc::new(blocks);
    FnTool::new(definition, move |_, _| {
        let value = serde_json::to_value(blocks()).unwrap();
        async move { Ok(value) }
    })
}

/// How large the attacker's results are.
#[derive(Clone, Copy)]
struct Scale {
    image: usize,
    blocks: usize,
    file: usize,
    text: usize,
}

/// Over the registry's defaults.
const HUGE: Scale = Scale {
    image: 13 * MIB,
    blocks: 100_000,
    file: 13 * MIB,
    text: 3 * MIB,
};

/// Over an agent's defaults and the small limits below, quick to move in a debug build.
const LARGE: Scale = Scale {
    image: 5 * MIB,
    blocks: 1_000,
    file: 5 * MIB,
    text: 100 * 1024,
};

const SMALL: ResultLimits = ResultLimits {
    max_text_bytes: 8 * 1024,
    max_media_bytes: 64 * 1024,
    max_blocks: 16,
};

const NAMES: [&str; 3] = ["huge_image", "many_blocks", "big_file_and_sound"];

fn registry_at(scale: Scale, limits: Option<ResultLimits>) -> Registry {
    let mut builder = Registry::builder().roles(["public"]).linked_tools(false);
    if let Some(limits) = limits {
        builder = builder.result_limits(limits);
    }
    builder
        .tool(content_tool("huge_image", move || {
            vec![
                Content::text("the scan:"),
                Content::image(vec![7u8; scale.image], "image/png"),
            ]
        }))
        .tool(content_tool("many_blocks", move || {
            (0..scale.blocks)
                .map(|i| Content::text(format!("row {i}")))
                .collect()
        }))
        .tool(content_tool("big_file_and_sound", move || {
            vec![
                Content::resource_bytes("file:///x.bin", "application/pdf", vec![1u8; scale.file]),
                Content::audio(vec![2u8; scale.file], "audio/wav"),
                Content::resource_text("file:///log.txt", "text/plain", "z".repeat(scale.text)),
            ]
        }))
        .build()
        .unwrap()
}

/// The blocks are within `limits` and end with the note of what was left out.
fn assert_bounded(blocks: &Value, limits: &ResultLimits) {
    let blocks = blocks.as_array().expect("a list of blocks");
    assert!(
        blocks.len() <= limits.max_blocks + 1,
        "{} blocks",
        blocks.len()
    );
    let media: usize = blocks
        .iter()
        .filter_map(|block| block.get("data").or_else(|| block["resource"].get("blob")))
        .map(|data| data.as_str().unwrap().len())
        .sum();
    assert!(media <= limits.max_media_bytes, "{media} bytes of media");
    let size = serde_json::to_string(blocks).unwrap().len();
    let ceiling = limits.max_media_bytes + limits.max_text_bytes + 200 * blocks.len() + 1000;
    assert!(size <= ceiling, "{size} bytes in all");
    let note = blocks.last().unwrap()["text"].as_str().unwrap_or_default();
    assert!(note.contains("content blocks left out"), "{note:.200}");
}

#[tokio::test]
async fn the_library_bounds_every_kind_of_content() {
    let registry = registry_at(HUGE, None);
    let caller = Caller::new("u", "public");
    for name in NAMES {
        let outcome = registry.call(&caller, ToolCall::new("c", name, "{}")).await;
        let blocks = outcome.result.as_ref().unwrap();
        assert_bounded(blocks, &ResultLimits::default());
    }
}

#[tokio::test]
async fn an_application_sets_its_own_limits() {
    let registry = registry_at(LARGE, Some(SMALL));
    let caller = Caller::new("u", "public");
    for name in NAMES {
        let outcome = registry.call(&caller, ToolCall::new("c", name, "{}")).await;
        assert_bounded(outcome.result.as_ref().unwrap(), &SMALL);
    }
}

#[tokio::test]
async fn http_answers_are_bounded() {
    let authenticate = |_: &axum::http::request::Parts| -> Result<Caller, AuthError> {
        Ok(Caller::new("u", "public"))
    };
    let app = router(
        registry_at(LARGE, Some(SMALL)),
        authenticate,
        HttpOptions::default(),
    );
    for name in NAMES {
        let request = Request::post("/tools/call")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                json!({"name": name, "arguments": {}}).to_string(),
            ))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = axum::body::to_bytes(response.into_body(), 64 * MIB)
            .await
            .unwrap();
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_bounded(&answer["result"], &SMALL);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_answers_are_bounded() {
    let registry = registry_at(LARGE, Some(SMALL));
    let server = McpServer::for_caller(registry, Caller::new("u", "public"));
    let client = connect_in_memory(server, ()).await;
    for name in NAMES {
        let result = client
            .peer()
            .call_tool(CallToolRequestParams::new(name))
            .await
            .unwrap();
        let blocks = serde_json::to_value(&result.content).unwrap();
        assert_bounded(&blocks, &SMALL);
    }
}

#[tokio::test]
async fn an_agents_transcript_holds_what_its_limits_allow() {
    let model = Scripted::new([
        calls(&[
            ("a", "huge_image", "{}"),
            ("b", "many_blocks", "{}"),
            ("c", "big_file_and_sound", "{}"),
        ]),
        text("Seen."),
    ]);
    let agent = Agent::builder(registry_at(LARGE, None), model.clone()).build();
    let run = agent
        .run(&Caller::new("u", "public"), "show me")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Seen."));
    let Some(Message::ToolResults { results }) = model.seen()[1].messages.last().cloned() else {
        panic!("the model read the results");
    };
    let agent_limits = ResultLimits {
        max_text_bytes: 32 * 1024,
        max_media_bytes: 4 * MIB,
        max_blocks: 64,
    };
    for result in &results {
        assert_bounded(result.result.as_ref().unwrap(), &agent_limits);
    }
    let transcript = serde_json::to_string(run.transcript()).unwrap().len();
    assert!(transcript < 3 * (4 * MIB + 64 * 1024), "{transcript} bytes");
    // The image was too large for the model: it reads that it was left out, and why.
    let note = results[0].result.as_ref().unwrap()[1]["text"]
        .as_str()
        .unwrap();
    assert!(
        note.starts_with("[1 of 2 content blocks left out (1 image;"),
        "{note}"
    );
}
