//! The names toolgate's spans and metrics use: the OpenTelemetry semantic conventions for
//! generative AI (marked Development upstream, so pinned: [`SEMCONV_VERSION`]), for MCP and
//! for HTTP, and the registry's own facts under `toolgate.`.

// Each adapter (HTTP, MCP, the agent's models) uses its own part of them.
#![cfg_attr(
    not(all(feature = "axum", feature = "mcp", feature = "models")),
    allow(dead_code)
)]

/// The version of the semantic conventions followed.
pub const SEMCONV_VERSION: &str = "1.41.0";
/// Its schema URL, given with the instrumentation scope.
pub(crate) const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

pub(crate) const OPERATION_NAME: &str = "gen_ai.operation.name";
pub(crate) const PROVIDER_NAME: &str = "gen_ai.provider.name";
pub(crate) const REQUEST_MODEL: &str = "gen_ai.request.model";
pub(crate) const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
pub(crate) const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
pub(crate) const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
pub(crate) const TOKEN_TYPE: &str = "gen_ai.token.type";
pub(crate) const AGENT_NAME: &str = "gen_ai.agent.name";
pub(crate) const CONVERSATION_ID: &str = "gen_ai.conversation.id";
pub(crate) const TOOL_NAME: &str = "gen_ai.tool.name";
pub(crate) const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
pub(crate) const TOOL_TYPE: &str = "gen_ai.tool.type";
pub(crate) const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
pub(crate) const TOOL_RESULT: &str = "gen_ai.tool.call.result";
pub(crate) const ERROR_TYPE: &str = "error.type";

pub(crate) const MCP_METHOD: &str = "mcp.method.name";
pub(crate) const MCP_SESSION: &str = "mcp.session.id";
pub(crate) const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
pub(crate) const JSONRPC_ID: &str = "jsonrpc.request.id";
pub(crate) const NETWORK_TRANSPORT: &str = "network.transport";

pub(crate) const HTTP_METHOD: &str = "http.request.method";
pub(crate) const HTTP_ROUTE: &str = "http.route";
pub(crate) const HTTP_STATUS: &str = "http.response.status_code";
pub(crate) const URL_PATH: &str = "url.path";

pub(crate) const ROLE: &str = "toolgate.caller.role";
pub(crate) const FRONT: &str = "toolgate.front";
pub(crate) const RUN_ID: &str = "toolgate.run.id";
pub(crate) const DECISION: &str = "toolgate.decision";
pub(crate) const APPROVAL_ASKED: &str = "toolgate.approval.asked";
pub(crate) const APPROVAL_TICKET: &str = "toolgate.approval.ticket";
pub(crate) const APPROVER: &str = "toolgate.approval.decided_by";
pub(crate) const APPROVAL_WAIT: &str = "toolgate.approval.wait_s";
pub(crate) const RATE_LIMITED: &str = "toolgate.rate_limited";
pub(crate) const DRY_RUN: &str = "toolgate.dry_run";
pub(crate) const OUTCOME: &str = "toolgate.outcome";

pub(crate) const OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
pub(crate) const TOKEN_USAGE: &str = "gen_ai.client.token.usage";
pub(crate) const TOOL_CALLS: &str = "toolgate.tool.calls";
pub(crate) const APPROVALS_WAITING: &str = "toolgate.approvals.waiting";
pub(crate) const APPROVAL_WAIT_DURATION: &str = "toolgate.approval.wait.duration";
