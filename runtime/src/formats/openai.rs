//! OpenAI: Chat Completions and the Responses API.

use std::sync::Arc;

use serde_json::{Value, json};

pub use super::schema::openai::{
    MAX_DEPTH, MAX_ENUM_VALUES, MAX_PROPERTIES, check_strict, strict_schema,
};

use super::error::{FormatError, arguments_field, string_field};
use super::{outcome_text, result_text, warn_not_strict};
use crate::call::{ToolCall, ToolOutcome};
use crate::definition::{ToolDefinition, provider_tool_name};

/// The parameters and strict flag of one tool: the strict view when asked for and possible.
fn parameters(tool: &ToolDefinition, strict: bool) -> (Value, bool) {
    if strict {
        match strict_schema(&tool.input_schema) {
            Ok(schema) => return (schema, true),
            Err(problems) => warn_not_strict("openai", &tool.name, &problems),
        }
    }
    (tool.input_schema.clone(), false)
}

/// Chat Completions `tools`: `[{"type": "function", "function": {name, description,
/// parameters, strict}}]`.
///
/// With `strict`, each tool that can be strict is sent with its strict-mode schema; one that
/// cannot is sent as is with `"strict": false` (and a warning saying why). To refuse such
/// tools instead, check them at build time with
/// [`require_compatible`](crate::RegistryBuilder::require_compatible).
pub fn chat_tools(tools: &[Arc<ToolDefinition>], strict: bool) -> Value {
    let tools = tools.iter().map(|tool| {
        let (parameters, strict) = parameters(tool, strict);
        json!({
            "type": "function",
            "function": {"name": provider_tool_name(&tool.name), "description": tool.description, "parameters": parameters, "strict": strict}
        })
    });
    Value::Array(tools.collect())
}

/// Responses API function tools: `[{"type": "function", name, description, parameters,
/// strict}]`.
pub fn responses_tools(tools: &[Arc<ToolDefinition>], strict: bool) -> Value {
    let tools = tools.iter().map(|tool| {
        let (parameters, strict) = parameters(tool, strict);
        json!({"type": "function", "name": provider_tool_name(&tool.name), "description": tool.description, "parameters": parameters, "strict": strict})
    });
    Value::Array(tools.collect())
}

/// The tool calls of an assistant message, or of a whole chat completion (its first
/// choice). Arguments stay JSON text, so invalid JSON is reported per call by the registry.
///
/// ```
/// use serde_json::json;
///
/// let message = json!({
///     "role": "assistant",
///     "content": null,
///     "tool_calls": [{
///         "id": "call_abc",
///         "type": "function",
///         "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}
///     }]
/// });
/// let calls = toolgate::formats::openai::calls_from_chat(&message).unwrap();
/// assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("call_abc", "get_weather"));
/// ```
pub fn calls_from_chat(message: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let message = match message.get("choices") {
        Some(choices) => choices
            .get(0)
            .and_then(|choice| choice.get("message"))
            .ok_or_else(|| FormatError::malformed("the completion has no `choices[0].message`"))?,
        None => message,
    };
    let Some(tool_calls) = message.get("tool_calls").filter(|calls| !calls.is_null()) else {
        return Ok(Vec::new());
    };
    let tool_calls = tool_calls
        .as_array()
        .ok_or_else(|| FormatError::malformed("`tool_calls` is not an array"))?;
    tool_calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let place = format!("tool_calls[{index}]");
            if let Some(kind) = call.get("type").and_then(Value::as_str)
                && kind != "function"
            {
                return Err(FormatError::malformed(format!(
                    "{place} is of type \"{kind}\"; only \"function\" calls are tools"
                )));
            }
            let id = string_field(call, "id", &place)?;
            let function = call
                .get("function")
                .ok_or_else(|| FormatError::malformed(format!("{place} has no `function`")))?;
            let name = string_field(function, "name", &format!("{place}.function"))?;
            Ok(ToolCall::new(
                id,
                name,
                arguments_field(function, "arguments"),
            ))
        })
        .collect()
}

/// The `function_call` items of a Responses API response (or of its `output` array).
pub fn calls_from_responses(response: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let output = response.get("output").unwrap_or(response);
    let items = output
        .as_array()
        .ok_or_else(|| FormatError::malformed("the response has no `output` array"))?;
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .map(|(index, item)| {
            let place = format!("output[{index}]");
            let id = string_field(item, "call_id", &place)?;
            let name = string_field(item, "name", &place)?;
            Ok(ToolCall::new(id, name, arguments_field(item, "arguments")))
        })
        .collect()
}

/// OpenAI sends arguments as JSON text; tolerate an object too.
/// One `{"role": "tool", "tool_call_id", "content"}` message per outcome, in order.
pub fn tool_messages(outcomes: &[ToolOutcome]) -> Vec<Value> {
    outcomes
        .iter()
        .map(|outcome| json!({"role": "tool", "tool_call_id": outcome.call_id, "content": outcome_text(outcome)}))
        .collect()
}

/// One `{"type": "function_call_output", "call_id", "output"}` item per outcome, in order;
/// content (images, PDF files) as a list of input parts.
pub fn function_call_outputs(outcomes: &[ToolOutcome]) -> Vec<Value> {
    outcomes
        .iter()
        .map(|outcome| {
            let output = match outcome.content() {
                Some(blocks) => super::content::openai_responses(&blocks),
                None => Value::String(result_text(&outcome.result)),
            };
            json!({"type": "function_call_output", "call_id": outcome.call_id, "output": output})
        })
        .collect()
}
