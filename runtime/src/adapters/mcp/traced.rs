//! The MCP server's span of each `tools/call` (feature `otel`), by the MCP semantic
//! conventions: its parent is the trace context the client put in the request's `_meta`
//! (either protocol revision), else the one in the HTTP request's headers.

use opentelemetry::trace::{SpanKind, TraceContextExt};
use opentelemetry::{Context, KeyValue};
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData};
use rmcp::service::RequestContext;

use crate::telemetry::conventions as name;
use crate::telemetry::{OperationSpan, Telemetry, propagation};

/// The span of a `tools/call`, started before the caller is known.
pub(super) fn call_span(
    telemetry: &Telemetry,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> OperationSpan {
    let parts = context.extensions.get::<http::request::Parts>();
    let from_meta = [request.meta.as_ref(), Some(&context.meta)]
        .into_iter()
        .flatten()
        .map(|meta| propagation::from_meta(&meta.0))
        .find(|parent| parent.span().span_context().is_valid());
    let parent = from_meta
        .or_else(|| parts.map(|parts| propagation::from_headers(&parts.headers)))
        .unwrap_or_else(Context::current);
    let tool = crate::util::bounded::clip(&request.name, crate::util::bounded::MAX_QUOTED);
    let mut attributes = vec![
        KeyValue::new(name::MCP_METHOD, "tools/call"),
        KeyValue::new(name::OPERATION_NAME, "execute_tool"),
        KeyValue::new(name::TOOL_NAME, tool.to_string()),
        KeyValue::new(name::JSONRPC_ID, context.id.to_string()),
        KeyValue::new(
            name::NETWORK_TRANSPORT,
            if parts.is_some() { "tcp" } else { "pipe" },
        ),
    ];
    let session = parts.and_then(|parts| parts.headers.get("mcp-session-id"));
    if let Some(session) = session.and_then(|value| value.to_str().ok()) {
        attributes.push(KeyValue::new(name::MCP_SESSION, session.to_owned()));
    }
    let version = context
        .meta
        .protocol_version()
        .map(|version| version.to_string());
    let version = version.or_else(|| {
        let peer = context.peer.peer_info()?;
        Some(peer.protocol_version.to_string())
    });
    if let Some(version) = version {
        attributes.push(KeyValue::new(name::MCP_PROTOCOL_VERSION, version));
    }
    let span_name = (format!("tools/call {tool}"), SpanKind::Server);
    OperationSpan::start(telemetry, span_name, &parent, attributes)
}

/// The answer on the span: a JSON-RPC error or a tool error is an error span.
pub(super) fn call_ended(span: OperationSpan, answer: &Result<CallToolResponse, ErrorData>) {
    match answer {
        Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
            span.fail("tool_error", "the tool call failed");
        }
        Ok(_) => {}
        Err(error) => span.fail(&error.code.0.to_string(), &error.message),
    }
    span.end();
}
