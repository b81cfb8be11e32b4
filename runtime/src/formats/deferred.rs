//! Tool lists for the providers' own tool search: the tools are sent with
//! `defer_loading: true` and stay out of the model's context until its search finds them.

use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Format;
use crate::definition::ToolDefinition;

/// Anthropic's server-side search over deferred tools (natural-language queries, BM25).
const ANTHROPIC_SEARCH: &str = "tool_search_tool_bm25_20251119";

/// `tools` in `format` for the provider's native tool search: each tool not named in
/// `always` is marked `defer_loading: true`, and the provider's search tool is added
/// (Anthropic Messages: `tool_search_tool_bm25_20251119`; OpenAI Responses: `tool_search`).
///
/// ```
/// use std::sync::Arc;
/// use toolgate::ToolDefinition;
/// use toolgate::formats::{Format, deferred_tools};
///
/// let tools = [
///     Arc::new(ToolDefinition::new("get_time", "The time.", "public", serde_json::json!({"type": "object"}))),
///     Arc::new(ToolDefinition::new("get_weather", "The weather.", "public", serde_json::json!({"type": "object"}))),
/// ];
/// let list = deferred_tools(Format::OpenAiResponses { strict: false }, &tools, &["get_time"]).unwrap();
/// assert_eq!(list[0]["type"], "tool_search");
/// assert!(list[1].get("defer_loading").is_none());
/// assert_eq!(list[2]["defer_loading"], true);
/// assert!(deferred_tools(Format::Gemini, &tools, &[]).is_err());
/// ```
pub fn deferred_tools(
    format: Format,
    tools: &[Arc<ToolDefinition>],
    always: &[&str],
) -> Result<Value, NoNativeToolSearch> {
    let search = match format {
        Format::Anthropic { .. } => {
            json!({"type": ANTHROPIC_SEARCH, "name": "tool_search_tool_bm25"})
        }
        Format::OpenAiResponses { .. } => json!({"type": "tool_search"}),
        _ => return Err(NoNativeToolSearch { format }),
    };
    let Value::Array(listed) = format.tools(tools) else {
        unreachable!("both formats list tools as an array");
    };
    let mut out = Vec::with_capacity(listed.len() + 1);
    if matches!(format, Format::OpenAiResponses { .. }) {
        out.push(search.clone());
    }
    for (mut tool, definition) in listed.into_iter().zip(tools) {
        if !always.contains(&definition.name.as_str()) {
            tool["defer_loading"] = Value::Bool(true);
        }
        out.push(tool);
    }
    if matches!(format, Format::Anthropic { .. }) {
        out.push(search);
    }
    Ok(Value::Array(out))
}

/// The format has no native deferred tool loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoNativeToolSearch {
    /// The format asked for.
    pub format: Format,
}

impl fmt::Display for NoNativeToolSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} has no native tool search with deferred loading (Anthropic Messages and OpenAI \
             Responses have); offer the `search_tools` tool instead (`toolgate::tool_search::SearchTools`)",
            self.format
        )
    }
}

impl std::error::Error for NoNativeToolSearch {}
