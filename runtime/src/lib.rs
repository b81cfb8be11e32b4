//! Turn ordinary Rust functions into tools a language model can call, safely.
//!
//! `#[tool]` on a function registers it: its JSON Schema comes from its signature and doc
//! comments. A [`Registry`] then shows each [`Caller`] only the tools its role allows,
//! checks every call against the very schema the model saw, and runs calls, alone or in
//! batches, with timeouts, cancellation and panic isolation.
//!
//! ```rust,standalone_crate
//! use toolgate::prelude::*;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "lowercase")]
//! enum Weekday { Monday, Tuesday }
//!
//! /// Get the clinic's opening hours for one day, or for the whole week.
//! #[tool(permission = "public", group = "clinic", read_only)]
//! async fn get_clinic_hours(
//!     /// Day of the week, e.g. "monday". Omit for all days.
//!     day: Option<Weekday>,
//! ) -> Result<String, ToolError> {
//!     Ok(match day {
//!         Some(Weekday::Monday) => "8:00-18:00".into(),
//!         Some(Weekday::Tuesday) => "8:00-12:00".into(),
//!         None => "Mon 8:00-18:00, Tue 8:00-12:00".into(),
//!     })
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let registry = Registry::builder()
//!     .roles(["public", "customer", "staff", "admin"])
//!     .build()
//!     .unwrap();
//! let caller = Caller::new("user-42", "customer");
//! let calls = vec![
//!     ToolCall::new("1", "get_clinic_hours", r#"{"day": "monday"}"#),
//!     ToolCall::new("2", "get_clinic_hours", r#"{"day": "funday"}"#),
//! ];
//! let outcomes = registry.run_batch(&caller, calls).await;
//! assert_eq!(outcomes[0].result.as_ref().unwrap(), "8:00-18:00");
//! assert_eq!(outcomes[1].error().unwrap().code, ErrorCode::InvalidArguments);
//! # }
//! ```
//!
//! Tools defined in another crate are registered when that crate is linked: if nothing
//! else refers to it, add `use my_tools as _;` to the application, and say what you expect
//! ([`RegistryBuilder::expect_tools`]) so that a missing one fails `build()`.
//!
//! Every key of `#[tool]` is described on [`tool`]. A tool may return [`content`] (images,
//! audio, resources) rather than JSON, report [progress](ToolContext::progress), log for
//! the client, and [ask the client](input) for a form, a sampling or its roots.
//!
//! Words that mean different things in different places:
//! - **deny**: a policy's [`Decision::Deny`](policy::Decision::Deny) refuses a call outright
//!   (`denied`); [`PolicyMode::Deny`](policy::PolicyMode::Deny) is the default policy's mode
//!   that refuses what would need approval; a person's
//!   [`ApprovalAnswer::Deny`](approval::ApprovalAnswer::Deny) and
//!   [`Registry::deny`] refuse one waiting call (`approval_denied`); `McpImport::deny` leaves
//!   an imported server's tools out.
//! - **State**: [`State<T>`] is a tool's `#[ctx]` application state, not axum's extractor of
//!   the same name; in a module that imports both, write `#[ctx] db: toolgate::State<Db>`.
//! - **limits**: [`ArgumentLimits`] bound the size and depth of arguments, [`ResultLimits`]
//!   the blocks and bytes of a content result;
//!   [`rate_limits`] bound how often calls are made, [`budget`]s how many tokens, how much
//!   money and how many calls a run or a caller per period may spend.
//! - [`BuildError`] is also what [`Registry::register`] returns: a tool added at run time is
//!   checked exactly like one at build time.
//!
//! Optional parts are behind features: `http` (or `axum`, its first name; [`http`]: a router
//! serving role-filtered tools), `console` ([`console`]: an approval console in the browser), `mcp` ([`mcp`]: an
//! MCP server and importer), `devices` ([`devices`]: tools on people's own machines, reached
//! over links they open), `oidc` ([`identity`]: callers from an identity provider's
//! tokens), `cedar` ([`cedar`]: rules over who, which tool and which arguments), `otel`
//! ([`telemetry`]: OpenTelemetry spans, metrics and OTLP export), `models`
//! (model clients for the [`agent`] loop), `embeddings` (a local embedding model for
//! [`search`]), `sqlite` and `postgres` ([`store`]s for state).

#![cfg_attr(docsrs, feature(doc_cfg))]

// The core: what a tool is and what a call carries (the files here), and the registry
// with its stages, which runs every call.
// Beside it: the agent loop, approvals, the audit trail, stores and search.
// Above it: the adapters that speak HTTP, MCP and the console's page (they use the
// registry; nothing below them uses them). `formats` writes the providers' shapes for the
// registry's exports and the agent's requests alike.
#[cfg(feature = "axum")]
mod adapters;
pub mod agent;
pub mod approval;
mod arguments;
pub mod audit;
pub mod budget;
mod call;
mod caller;
#[cfg(feature = "cedar")]
#[cfg_attr(docsrs, doc(cfg(feature = "cedar")))]
pub mod cedar;
pub mod content;
mod context;
mod definition;
mod error;
pub mod events;
mod exact;
pub mod formats;
mod front;
#[cfg(feature = "oidc")]
#[cfg_attr(docsrs, doc(cfg(feature = "oidc")))]
pub mod identity;
pub mod input;
pub mod logging;
mod output;
mod paused;
pub mod policy;
pub mod progress;
pub mod rate_limits;
mod registry;
mod result_limits;
mod roles;
mod runtime_needs;
mod schema;
pub mod search;
pub mod stage;
mod static_tool;
pub mod store;
mod store_error;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod telemetry;
mod template;
mod tool;
pub mod tool_search;
mod usage;
mod util;
mod validation;
pub mod workflow;

#[cfg(feature = "console")]
#[cfg_attr(docsrs, doc(cfg(feature = "console")))]
pub use adapters::console;
#[cfg(feature = "devices")]
#[cfg_attr(docsrs, doc(cfg(feature = "devices")))]
pub use adapters::devices;
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub use adapters::http;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use adapters::mcp;

#[doc(hidden)]
pub mod __private;

pub use arguments::{ArgumentLimits, ToolArguments};
pub use call::{ToolCall, ToolOutcome};
pub use caller::Caller;
pub use context::{CallId, CancellationToken, FromContext, State, StateRequirement, ToolContext};
pub use definition::{
    Hints, Risk, SourceLocation, ToolDefinition, is_valid_tool_name, is_valid_ui_name,
    provider_tool_name,
};
pub use error::{ErrorCode, ToolError};
pub use front::FrontEnd;
pub use registry::{
    BatchMode, BatchOptions, BuildError, BuildProblem, CallOptions, DEFAULT_SUGGESTION_THRESHOLD,
    Registry, RegistryBuilder, ToolList,
};
pub use result_limits::ResultLimits;
pub use roles::Roles;
/// The string type of names and ids a call carries ([`ToolCall`], [`ToolOutcome`], [`Caller`]):
/// up to 23 bytes kept inline, so short names cost no allocation and clone by copying.
pub use smol_str::SmolStr;
pub use template::{ConfiguredTool, ToolTemplate};
pub use tool::{FnTool, ReviewFn, Tool, ToolFuture, ToolResult};

#[doc(inline)]
#[doc = include_str!("tool_attribute.md")]
pub use toolgate_macros::tool;

/// The usual imports: `use toolgate::prelude::*;`.
pub mod prelude {
    pub use crate::{
        BatchMode, BatchOptions, CallId, CallOptions, Caller, CancellationToken, ErrorCode,
        Registry, Risk, State, ToolCall, ToolContext, ToolError, ToolOutcome, tool,
    };
}
