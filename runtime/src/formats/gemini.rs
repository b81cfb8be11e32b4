//! Gemini API: function declarations, `functionCall` parts in, `functionResponse` parts out.

use std::sync::Arc;

use serde_json::{Value, json};

pub use super::schema::gemini::{check, declaration_schema};

use super::error::{FormatError, arguments_field, string_field};
use crate::call::{ToolCall, ToolOutcome};
use crate::definition::{ToolDefinition, provider_tool_name};

/// Id given to a `functionCall` that carries none (older models). Results for such calls
/// are sent back by name only, as Gemini expects.
pub const GENERATED_ID_PREFIX: &str = "gemini-call-";

/// One function declaration: `parameters` in Gemini's schema subset; where a schema cannot
/// be expressed there (open maps, recursive types), `parametersJsonSchema` with the
/// canonical schema instead. A tool without parameters has neither.
pub fn declaration(tool: &ToolDefinition) -> Value {
    let mut entry =
        json!({"name": provider_tool_name(&tool.name), "description": tool.description});
    let has_parameters = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if !has_parameters {
        return entry;
    }
    match declaration_schema(&tool.input_schema) {
        Ok(schema) => entry["parameters"] = schema,
        Err(problems) => {
            let reasons: Vec<String> = problems.iter().map(ToString::to_string).collect();
            tracing::debug!(tool = %tool.name, reasons = %reasons.join("; "), "sent to Gemini as parametersJsonSchema");
            entry["parametersJsonSchema"] = tool.input_schema.clone();
        }
    }
    entry
}

/// The request's `tools`: `[{"functionDeclarations": [...]}]`.
pub fn tools(tools: &[Arc<ToolDefinition>]) -> Value {
    let declarations: Vec<Value> = tools.iter().map(|tool| declaration(tool)).collect();
    json!([{ "functionDeclarations": declarations }])
}

/// The `functionCall` parts of a response (its first candidate), of a `content` object, or of
/// a `parts` array.
///
/// ```
/// use serde_json::json;
///
/// let response = json!({"candidates": [{"content": {"role": "model", "parts": [
///     {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
/// ]}}]});
/// let calls = toolgate::formats::gemini::calls_from_response(&response).unwrap();
/// assert_eq!(calls[0].name, "get_weather");
/// assert_eq!(calls[0].id, "gemini-call-0");
/// ```
pub fn calls_from_response(response: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let content = match response.get("candidates") {
        Some(candidates) => candidates
            .get(0)
            .and_then(|candidate| candidate.get("content"))
            .ok_or_else(|| FormatError::malformed("the response has no `candidates[0].content`"))?,
        None => response,
    };
    let parts = content.get("parts").unwrap_or(content);
    let parts = parts
        .as_array()
        .ok_or_else(|| FormatError::malformed("the content has no `parts` array"))?;
    parts
        .iter()
        .enumerate()
        .filter_map(|(index, part)| part.get("functionCall").map(|call| (index, call)))
        .map(|(index, call)| {
            let name = string_field(call, "name", &format!("parts[{index}].functionCall"))?;
            let id = match call.get("id").and_then(Value::as_str) {
                Some(id) => id.to_owned(),
                None => format!("{GENERATED_ID_PREFIX}{index}"),
            };
            Ok(ToolCall::new(id, name, arguments_field(call, "args")))
        })
        .collect()
}

/// One user content with a `functionResponse` part per outcome, in call order: `output` on
/// success, `error` on failure; the call's `id` is echoed when Gemini sent one.
pub fn function_response_content(outcomes: &[ToolOutcome]) -> Value {
    let parts: Vec<Value> = outcomes
        .iter()
        .map(|outcome| {
            let (response, media) = match (&outcome.result, outcome.content()) {
                (Ok(_), Some(blocks)) => {
                    let (text, media) = super::content::gemini(&blocks);
                    (json!({ "output": text }), media)
                }
                (Ok(value), None) => (json!({ "output": value }), Vec::new()),
                (Err(error), _) => (json!({ "error": error }), Vec::new()),
            };
            let mut function_response = json!({"name": outcome.tool, "response": response});
            // Images, sound and files go with the response itself (multimodal function
            // responses).
            if !media.is_empty() {
                function_response["parts"] = Value::Array(media);
            }
            if !outcome.call_id.starts_with(GENERATED_ID_PREFIX) {
                function_response["id"] = Value::String(outcome.call_id.to_string());
            }
            json!({ "functionResponse": function_response })
        })
        .collect();
    json!({"role": "user", "parts": parts})
}
