//! The registry spoken over the wire: HTTP routes, an MCP server and client, and the
//! console's page. They use the registry and the agent; nothing beneath them uses them.

#[cfg(feature = "console")]
pub mod console;
#[cfg(feature = "devices")]
pub mod devices;
pub mod http;
#[cfg(feature = "mcp")]
pub mod mcp;
