//! Real servers and clients for toolgate's tests, started by the tests themselves.

mod llama;
mod postgres;
mod python_mcp;

pub use llama::LlamaServer;
pub use postgres::TempPostgres;
pub use python_mcp::{MCP_SDK, python_with_mcp_sdk};
