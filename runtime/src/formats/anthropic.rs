//! Anthropic Messages API: `tools`, `tool_use` blocks in, `tool_result` blocks out.

use std::sync::Arc;

use serde_json::{Value, json};

pub use super::schema::anthropic::{check_strict, strict_schema};

use super::error::{FormatError, arguments_field, string_field};
use super::{result_text, warn_not_strict};
use crate::call::{ToolCall, ToolOutcome};
use crate::definition::{ToolDefinition, provider_tool_name};

/// `tools`: `[{name, description, input_schema}]`, with `"strict": true` and the
/// strict-tool-use schema for each tool that allows it when `strict` is asked for.
pub fn tools(tools: &[Arc<ToolDefinition>], strict: bool) -> Value {
    let tools = tools.iter().map(|tool| {
        let mut entry = json!({"name": provider_tool_name(&tool.name), "description": tool.description, "input_schema": tool.input_schema});
        if strict {
            match strict_schema(&tool.input_schema) {
                Ok(schema) => {
                    entry["input_schema"] = schema;
                    entry["strict"] = Value::Bool(true);
                }
                Err(problems) => warn_not_strict("anthropic", &tool.name, &problems),
            }
        }
        entry
    });
    Value::Array(tools.collect())
}

/// The `tool_use` blocks of an assistant message (or of its `content` array).
///
/// ```
/// use serde_json::json;
///
/// let message = json!({
///     "role": "assistant",
///     "content": [
///         {"type": "text", "text": "Let me check."},
///         {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}
///     ]
/// });
/// let calls = toolgate::formats::anthropic::calls_from_message(&message).unwrap();
/// assert_eq!(calls[0].id, "toolu_01");
/// ```
pub fn calls_from_message(message: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let content = message.get("content").unwrap_or(message);
    let blocks = content
        .as_array()
        .ok_or_else(|| FormatError::malformed("the message has no `content` array"))?;
    blocks
        .iter()
        .enumerate()
        .filter(|(_, block)| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|(index, block)| {
            let place = format!("content[{index}]");
            let id = string_field(block, "id", &place)?;
            let name = string_field(block, "name", &place)?;
            Ok(ToolCall::new(id, name, arguments_field(block, "input")))
        })
        .collect()
}

/// One user message holding a `tool_result` block per outcome, in call order, with
/// `is_error` for failures (Anthropic requires all results of a turn in one message).
pub fn tool_result_message(outcomes: &[ToolOutcome]) -> Value {
    let blocks: Vec<Value> = outcomes
        .iter()
        .map(|outcome| {
            json!({
                "type": "tool_result",
                "tool_use_id": outcome.call_id,
                "content": match outcome.content() {
                    Some(blocks) => super::content::anthropic(&blocks),
                    None => Value::String(result_text(&outcome.result)),
                },
                "is_error": outcome.result.is_err()
            })
        })
        .collect();
    json!({"role": "user", "content": blocks})
}
