//! Real servers and clients for toolgate's tests, started by the tests themselves.

#[cfg(feature = "browser")]
mod browser;
mod conformance;
mod llama;
mod oidc;
mod postgres;
mod python_mcp;

#[cfg(feature = "browser")]
pub use browser::{Chromium, Page};
pub use conformance::{CONFORMANCE, ConformanceSuite, SERVER_EVERYTHING, ScenarioResult};
pub use llama::LlamaServer;
pub use oidc::{OIDC_PROVIDER, OidcProvider};
pub use postgres::TempPostgres;
pub use python_mcp::{MCP_SDK, python_with_mcp_sdk};
