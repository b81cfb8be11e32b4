//! Speaking each provider's format: tools out (with schemas each provider accepts), calls
//! in, results out.
//!
//! | provider | tools | calls in | results out |
//! |---|---|---|---|
//! | OpenAI Chat Completions | [`openai::chat_tools`] | [`openai::calls_from_chat`] | [`openai::tool_messages`] |
//! | OpenAI Responses | [`openai::responses_tools`] | [`openai::calls_from_responses`] | [`openai::function_call_outputs`] |
//! | Anthropic Messages | [`anthropic::tools`] | [`anthropic::calls_from_message`] | [`anthropic::tool_result_message`] |
//! | Gemini | [`gemini::tools`] | [`gemini::calls_from_response`] | [`gemini::function_response_content`] |
//! | MCP | [`mcp::tools`] | [`mcp::call_from_params`] | [`mcp::call_tool_result`] |
//! | free text | — | [`calls_from_text`] | — |
//!
//! Calls are always validated against the canonical schema; the provider schemas are views
//! of it. Ids are kept end to end, and every writer gives one result per outcome, in order.

pub mod anthropic;
mod content;
mod deferred;
mod error;
mod free_text;
pub mod gemini;
pub mod mcp;
pub mod openai;
pub(crate) mod schema;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::call::ToolOutcome;
pub use deferred::{NoNativeToolSearch, deferred_tools};
pub use error::{FormatError, FormatErrorKind};
pub use free_text::calls_from_text;
pub use schema::Incompatibility;

use crate::definition::ToolDefinition;
use crate::error::ToolError;

/// A whole tool list in one provider's shape, as [`Registry::export`](crate::Registry::export)
/// serves it (cached per role). Not to be confused with [`Provider`]: a `Format` is how a
/// listing is written (OpenAI Chat and Responses, strict or not, are four formats), a
/// `Provider` is whose schema rules a build can require every tool to meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// toolgate's own definitions.
    Canonical,
    /// OpenAI Chat Completions `tools`; `strict` where each tool allows it.
    OpenAiChat {
        /// Send strict-mode schemas (tools that cannot be strict are sent non-strict).
        strict: bool,
    },
    /// OpenAI Responses API function tools.
    OpenAiResponses {
        /// Send strict-mode schemas (tools that cannot be strict are sent non-strict).
        strict: bool,
    },
    /// Anthropic Messages `tools`.
    Anthropic {
        /// Send strict-tool-use schemas (tools that cannot be strict are sent non-strict).
        strict: bool,
    },
    /// Gemini `tools` with `functionDeclarations`.
    Gemini,
    /// MCP `Tool` objects.
    Mcp,
}

impl Format {
    /// The tool list in this format.
    pub fn tools(self, tools: &[Arc<ToolDefinition>]) -> Value {
        match self {
            Format::Canonical => Value::Array(tools.iter().map(|tool| json!(&**tool)).collect()),
            Format::OpenAiChat { strict } => openai::chat_tools(tools, strict),
            Format::OpenAiResponses { strict } => openai::responses_tools(tools, strict),
            Format::Anthropic { strict } => anthropic::tools(tools, strict),
            Format::Gemini => gemini::tools(tools),
            Format::Mcp => mcp::tools(tools),
        }
    }
}

/// A provider with schema restrictions that a registry can check every tool against at
/// build time ([`RegistryBuilder::require_compatible`](crate::RegistryBuilder::require_compatible)).
/// For the shape of a tool listing, see [`Format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI strict mode.
    OpenAiStrict,
    /// Anthropic strict tool use.
    AnthropicStrict,
    /// Gemini function declarations (`parameters`).
    Gemini,
}

impl Provider {
    /// Every reason `definition` cannot be shown to this provider; empty when it can.
    pub fn incompatibilities(self, definition: &ToolDefinition) -> Vec<Incompatibility> {
        let result = match self {
            Provider::OpenAiStrict => openai::strict_schema(&definition.input_schema),
            Provider::AnthropicStrict => anthropic::strict_schema(&definition.input_schema),
            Provider::Gemini => gemini::declaration_schema(&definition.input_schema),
        };
        result.err().unwrap_or_default()
    }

    /// The provider's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAiStrict => "OpenAI strict mode",
            Provider::AnthropicStrict => "Anthropic strict tool use",
            Provider::Gemini => "Gemini",
        }
    }
}

/// The text a model reads for a result: a string as is, other values as compact JSON, and an
/// error as `{"error": {"code": ..., "message": ..., "details": ...}}`.
pub fn result_text(result: &Result<Value, ToolError>) -> String {
    match result {
        Ok(Value::String(text)) => text.clone(),
        Ok(value) => value.to_string(),
        Err(error) => json!({ "error": error }).to_string(),
    }
}

/// The text a model reads for an outcome: [`result_text`], or for content (images, audio,
/// resources) its text with a line describing each other block.
pub fn outcome_text(outcome: &ToolOutcome) -> String {
    match outcome.content() {
        Some(blocks) => crate::content::describe_all(&blocks),
        None => result_text(&outcome.result),
    }
}

/// Logs, once per export, why a tool is sent without strict mode.
fn warn_not_strict(provider: &str, tool: &str, problems: &[Incompatibility]) {
    let reasons: Vec<String> = problems.iter().map(ToString::to_string).collect();
    tracing::warn!(tool, provider, reasons = %reasons.join("; "), "tool sent without strict mode");
}
