//! Serving a registry over MCP (feature `mcp`), on the official Rust SDK `rmcp`: over stdio
//! for one configured caller, or over Streamable HTTP with the caller of each request taken
//! from the application's [`Authenticate`](crate::http::Authenticate) hook.
//!
//! `serverInfo` names the application ([`ServerIdentity`]). `tools/list` shows the caller's
//! tools only (paginated, by name), with `title`, `annotations`, object-rooted
//! `outputSchema` (none for a result of any shape), schemas keeping only JSON Schema's own
//! `format`s, and caching hints: `ttlMs` ([`McpServer::list_ttl`]) and `cacheScope`
//! (`private` when roles see different lists); `tools/call` runs through the registry (validation, policy,
//! audit) and answers argument and execution errors as results with `isError: true`, so a
//! model can read and fix them; an unknown or hidden tool is a protocol error. A tool's
//! [progress](crate::progress) reports reach a client that gave a progress token as
//! `notifications/progress`, in order, before the result. A client's
//! cancellation notification cancels the running call, and
//! `notifications/tools/list_changed` follows every run-time change of what the caller sees:
//! on the connection for clients of the `initialize` handshake, and on a
//! `subscriptions/listen` stream for clients of protocol 2026-07-28. Changes to tools above
//! the caller's role are not announced.
//!
//! [`McpImport`] goes the other way: it imports the tools of external MCP servers.

mod client;
mod identity;
mod list_changes;
mod progress;
mod server;

pub use client::{ImportedServer, ImportedTool, McpImport, McpImportError};
pub use identity::ServerIdentity;
pub use server::{McpHttpOptions, McpServer, http_service, http_service_with, serve_stdio};
