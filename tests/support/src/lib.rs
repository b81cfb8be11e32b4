//! Real servers and clients for toolgate's tests, started by the tests themselves.

#[cfg(feature = "browser")]
mod browser;
mod clock;
mod conformance;
mod llama;
mod oidc;
mod phoenix;
mod postgres;
mod python_mcp;
mod setup;

#[cfg(feature = "browser")]
pub use browser::{Chromium, Page};
pub use clock::utc_offset_for_hour;
pub use conformance::{CONFORMANCE, ConformanceSuite, SERVER_EVERYTHING, ScenarioResult};
pub use llama::LlamaServer;
pub use oidc::{OIDC_PROVIDER, OidcProvider};
pub use phoenix::Phoenix;
pub use postgres::TempPostgres;
pub use python_mcp::{MCP_SDK, python_with_mcp_sdk};
