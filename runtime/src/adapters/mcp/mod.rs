//! Serving a registry over MCP (feature `mcp`), on the official Rust SDK `rmcp`: over stdio
//! for one configured caller, or over Streamable HTTP with the caller of each request taken
//! from the application's [`Authenticate`](crate::adapters::http::Authenticate) hook.
//!
//! `serverInfo` names the application ([`ServerIdentity`]). `tools/list` shows the caller's
//! tools only (paginated, by name), with `title`, `annotations`, object-rooted
//! `outputSchema` (none for a result of any shape), schemas keeping only JSON Schema's own
//! `format`s, and caching hints: `ttlMs` ([`McpServer::list_ttl`]) and `cacheScope`
//! (`private` when roles see different lists); `tools/call` runs through the registry (validation, policy,
//! audit) and answers argument and execution errors as results with `isError: true`, so a
//! model can read and fix them; an unknown or hidden tool is a protocol error. A tool's
//! [progress](crate::progress) reports reach a client that gave a progress token as
//! `notifications/progress`, in order, before the result, and its
//! [log messages](crate::ToolContext::log) a client that asked for a log level as
//! `notifications/message`. Results may be [content](crate::content) (images, audio,
//! resources). A tool can [ask the client](crate::input) for a form, a sampling or its
//! roots: a protocol 2026-07-28 client gets an `InputRequiredResult` with a signed
//! `requestState` and calls again with the answers; an `initialize` client is asked by the
//! server. A call that needs approval, by a caller whose role may decide it, asks the
//! person at the client the same way (an approval form; single-use, bound to the caller,
//! tool and arguments); any other such call waits with a ticket for an approver. A client's
//! cancellation notification cancels the running call, and
//! `notifications/tools/list_changed` follows every run-time change of what the caller sees:
//! on the connection for clients of the `initialize` handshake, and on a
//! `subscriptions/listen` stream for clients of protocol 2026-07-28. Changes to tools above
//! the caller's role are not announced.
//!
//! [`McpImport`] goes the other way: it imports the tools of external MCP servers.

mod call;
pub(super) mod client;
mod identity;
mod input;
mod list_changes;
mod progress;
mod server;
#[cfg(feature = "otel")]
mod traced;

pub use client::{ImportedServer, ImportedTool, McpImport, McpImportError};
pub use identity::ServerIdentity;
pub use server::{McpHttpOptions, McpServer, http_service, http_service_with, serve_stdio};
