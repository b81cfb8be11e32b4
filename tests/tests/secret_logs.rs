//! With every target at TRACE, filtered through `toolgate::logging::keeping_secrets`, no
//! `#[secret]` value reaches the log from any front end: the library, HTTP, MCP (in memory
//! and over streamable HTTP), and an agent whose model answers over HTTP. Without the
//! filter, rmcp writes the MCP request in clear: the check would see a leak.

mod agent;

use agent::server::{ModelServer, Reply};
use axum::body::Body;
use axum::http::{Request, header};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use toolgate::agent::Agent;
use toolgate::agent::models::OpenAiChat;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
use toolgate_tests::capture_async;
use tower::ServiceExt;

const SECRET: &str = "c0rrect-h0rse-B4ttery";

/// Unlock a door.
#[tool(permission = "user", read_only)]
fn unlock(
    door: String,
    /// The door's code.
    #[secret]
    code: String,
) -> String {
    let _ = code;
    format!("{door} is open")
}

fn registry() -> Registry {
    Registry::builder()
        .roles(["user"])
        .filter_linked(|tool| tool.name == "unlock")
        .audit_sink(toolgate::audit::TracingSink)
        .build()
        .unwrap()
}

fn user() -> Caller {
    Caller::new("ann", "user")
}

fn arguments() -> serde_json::Map<String, Value> {
    let Value::Object(map) = json!({"door": "front", "code": SECRET}) else {
        unreachable!()
    };
    map
}

async fn over_the_library() -> String {
    let call = ToolCall::new("1", "unlock", Value::Object(arguments()));
    let outcome = registry().call(&user(), call).await;
    format!("{:?}", outcome.result)
}

async fn over_http() -> String {
    let authenticate = |_: &axum::http::request::Parts| -> Result<Caller, AuthError> { Ok(user()) };
    let app = router(registry(), authenticate, HttpOptions::default());
    let body = json!({"name": "unlock", "arguments": arguments()});
    let request = Request::post("/tools/call")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

async fn over_mcp_in_memory() -> String {
    let server = McpServer::for_caller(registry(), user());
    let client = toolgate_tests::connect_in_memory(server, ()).await;
    let request = CallToolRequestParams::new("unlock").with_arguments(arguments());
    let result = client.peer().call_tool(request).await.unwrap();
    let _ = client.cancel().await;
    format!("{:?}", result.content)
}

async fn over_mcp_http() -> String {
    let authenticate = |_: &axum::http::request::Parts| -> Result<Caller, AuthError> { Ok(user()) };
    let service = toolgate::mcp::http_service(registry(), authenticate);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback_service(service);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "unlock", "arguments": arguments()}});
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(format!("http://{address}/"))
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let opened = post(initialize, None).await.unwrap();
    let session = opened
        .headers()
        .get("mcp-session-id")
        .map(|value| value.to_str().unwrap().to_owned());
    let _ = opened.text().await;
    post(call, session).await.unwrap().text().await.unwrap()
}

async fn over_an_agent() -> String {
    let call = json!({"id": "c1", "type": "function", "function": {"name": "unlock",
        "arguments": json!({"door": "front", "code": SECRET}).to_string()}});
    let completion = |message: Value| {
        Reply::json(
            json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}}),
        )
    };
    let model = ModelServer::start([
        completion(json!({"role": "assistant", "content": null, "tool_calls": [call]})),
        completion(json!({"role": "assistant", "content": "Open."})),
    ])
    .await;
    let agent = Agent::builder(registry(), OpenAiChat::new(&model.base, "m")).build();
    let run = agent.run(&user(), "open the front door").await.unwrap();
    format!("{:?}", run.calls())
}

#[test]
fn at_trace_no_front_end_logs_a_secret() {
    let filter = toolgate::logging::keeping_secrets("trace");
    let (answers, log) = capture_async(&filter, async {
        vec![
            ("library", over_the_library().await),
            ("HTTP", over_http().await),
            ("MCP in memory", over_mcp_in_memory().await),
            ("MCP over HTTP", over_mcp_http().await),
            ("agent", over_an_agent().await),
        ]
    });
    for (front_end, answer) in &answers {
        assert!(answer.contains("front is open"), "{front_end}: {answer}");
    }
    assert!(log.contains("TRACE"), "the log was at TRACE");
    assert!(
        log.contains("unlock"),
        "toolgate's audit events were logged"
    );
    assert!(
        log.contains("hyper_util"),
        "the model client's events were logged"
    );
    if let Some(at) = log.find(SECRET) {
        let line_start = log[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = log[line_start..].lines().next().unwrap_or_default();
        panic!("the secret was logged: {line:.400}");
    }
}

#[test]
fn without_the_filter_rmcp_logs_the_request_in_clear() {
    let (_, log) = capture_async("trace", over_mcp_in_memory());
    assert!(
        log.contains(SECRET),
        "rmcp no longer logs requests: QUIET_DEPENDENCIES may be relaxed"
    );
}
