//! What the call benches share: the same two tools written for toolgate, for rmcp, and by
//! hand (the floor), and rmcp's router with a real connection's peer.

// Each bench uses part of it.
#![allow(dead_code)]

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject, NumberOrString};
use rmcp::service::{Peer, RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::Value;
use std::hint::black_box;

mod tools;
pub use tools::*;

/// What a careful hand-written tool call does: parse, call, serialize.
pub async fn floor_add(arguments: &str) -> Value {
    let parsed: AddArguments = serde_json::from_str(arguments).unwrap();
    serde_json::to_value(add_directly(parsed.a, parsed.b)).unwrap()
}

pub async fn floor_search(arguments: &str) -> Value {
    let parsed: SearchArguments = serde_json::from_str(arguments).unwrap();
    serde_json::to_value(search_directly(parsed.query, parsed.max, parsed.tags)).unwrap()
}

/// The same two tools written for rmcp, called through its router (built once).
#[derive(Clone)]
pub struct RmcpTools {
    tool_router: ToolRouter<Self>,
}

impl RmcpTools {
    /// The tools, with their router built once.
    pub fn routed() -> Self {
        RmcpTools {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl RmcpTools {
    #[tool(description = "Add two numbers.")]
    async fn add(&self, Parameters(arguments): Parameters<AddArguments>) -> Json<Sum> {
        Json(add_directly(arguments.a, arguments.b))
    }

    #[tool(description = "Search the catalogue.")]
    async fn search(&self, Parameters(arguments): Parameters<SearchArguments>) -> Json<Found> {
        Json(search_directly(
            arguments.query,
            arguments.max,
            arguments.tags,
        ))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpTools {}

/// rmcp's router with the peer a real connection gives its calls.
pub struct Rmcp {
    tools: RmcpTools,
    peer: Peer<RoleServer>,
    _server: RunningService<RoleServer, RmcpTools>,
    _client: RunningService<rmcp::RoleClient, ()>,
}

impl Rmcp {
    pub async fn connect() -> Rmcp {
        let tools = RmcpTools::routed();
        let (server_side, client_side) = tokio::io::duplex(64 * 1024);
        let serving = tools.clone().serve(tokio::io::split(server_side));
        let connecting = ().serve(tokio::io::split(client_side));
        let (server, client) = tokio::join!(serving, connecting);
        let server = server.expect("the rmcp server starts");
        Rmcp {
            peer: server.peer().clone(),
            tools,
            _server: server,
            _client: client.expect("the rmcp client connects"),
        }
    }

    /// Text in, structured JSON out, as a server's `tools/call` does it.
    pub async fn call(&self, name: &'static str, arguments: &str) -> Value {
        let arguments: JsonObject = serde_json::from_str(arguments).unwrap();
        let params = CallToolRequestParams::new(name).with_arguments(arguments);
        let context = RequestContext::new(NumberOrString::Number(1), self.peer.clone());
        let call = ToolCallContext::new(&self.tools, params, context);
        match self.tools.tool_router.call(call).await.unwrap() {
            CallToolResponse::Complete(result) => result.structured_content.unwrap(),
            _ => unreachable!("a plain tool completes"),
        }
    }
}

/// A client connected to `server` over an in-memory pipe.
pub async fn connect(server: impl ServerHandler) -> RunningService<RoleClient, ()> {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server
            .serve(tokio::io::split(server_side))
            .await
            .expect("the server starts");
        let _ = running.waiting().await;
    });
    ().serve(tokio::io::split(client_side))
        .await
        .expect("the client connects")
}

pub async fn round_trip(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: &str,
) {
    let arguments: JsonObject = serde_json::from_str(arguments).unwrap();
    let params = CallToolRequestParams::new(tool).with_arguments(arguments);
    match client.call_tool_once(params).await.unwrap() {
        CallToolResponse::Complete(result) => {
            assert_ne!(result.is_error, Some(true), "{result:?}");
            black_box(result);
        }
        other => panic!("a plain tool completes: {other:?}"),
    }
}

/// The registry with its defaults (audit history on), and one without the history.
pub fn registries() -> (toolgate::Registry, toolgate::Registry) {
    let default = toolgate::Registry::builder()
        .roles(["public"])
        .build()
        .unwrap();
    let history_off = toolgate::Registry::builder()
        .roles(["public"])
        .history_capacity(0)
        .build()
        .unwrap();
    (default, history_off)
}

/// A call to `tool` as the rmcp row makes its request: the tool's name (and the call's id)
/// borrowed from static text, not copied; the arguments owned text, as they come from a
/// model. (rmcp's request holds its name as a `Cow<'static, str>`, borrowed from `tool`.)
pub fn call_to(tool: &'static str, arguments: &str) -> toolgate::ToolCall {
    use toolgate::SmolStr;
    toolgate::ToolCall::new(
        SmolStr::new_static("1"),
        SmolStr::new_static(tool),
        arguments,
    )
}

/// The same call with its id and name copied into the call (as a call read from the wire
/// has them): what the copying costs is this row's difference from [`call_to`]'s.
pub fn call_copying_names(tool: &'static str, arguments: &str) -> toolgate::ToolCall {
    toolgate::ToolCall::new("1", tool, arguments)
}

/// A call stage that lets every call through, reading nothing of it: what one
/// application stage costs a call (see the `*_noop_stage` rows).
pub struct NoopStage;

impl toolgate::stage::CallStage for NoopStage {
    fn name(&self) -> &str {
        "noop"
    }

    fn check(&self, _: &toolgate::stage::StageCall<'_>) -> toolgate::stage::StageVerdict {
        toolgate::stage::StageVerdict::Continue
    }
}

/// The default registry with one no-op application stage.
pub fn registry_with_noop_stage() -> toolgate::Registry {
    toolgate::Registry::builder()
        .roles(["public"])
        .call_stage(NoopStage)
        .build()
        .unwrap()
}
