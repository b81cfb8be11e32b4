//! Tool calls written as JSON inside free text, for models without native tool calling.

use serde_json::{Map, Value};

use super::error::{FormatError, FormatErrorKind};
use crate::arguments::ToolArguments;
use crate::call::ToolCall;

/// Keys naming the tool; `name` counts only beside an arguments key.
const TOOL_KEYS: &[&str] = &["tool", "tool_name", "function"];
const ARGUMENT_KEYS: &[&str] = &["arguments", "args", "parameters", "input"];
const LIST_KEYS: &[&str] = &["tool_calls", "calls"];

/// Finds the tool call(s) in a model's text: a JSON object naming a tool and its arguments,
/// or a list of them, bare or in a fenced code block, with any prose around it.
///
/// Accepted shapes: `{"name": ..., "arguments": {...}}` (also `tool`/`tool_name` for the
/// name, `args`/`parameters`/`input` for the arguments, which may be JSON text),
/// `{"function": {"name": ..., "arguments": ...}}`, `{"tool_calls": [...]}`, and a JSON
/// array of calls. Calls get the ids `text-call-0`, `text-call-1`, ...
///
/// Nothing found, or several separate candidates (which one was meant?), is an error that
/// says so; fenced blocks are preferred over bare JSON.
///
/// ```
/// let text = r#"Sure! I'll look that up.
/// ```json
/// {"name": "get_weather", "arguments": {"city": "Paris"}}
/// ```"#;
/// let calls = toolgate::formats::calls_from_text(text).unwrap();
/// assert_eq!(calls[0].name, "get_weather");
/// ```
pub fn calls_from_text(text: &str) -> Result<Vec<ToolCall>, FormatError> {
    let fenced: Vec<Vec<RawCall>> = fenced_blocks(text)
        .iter()
        .filter_map(calls_in_value)
        .collect();
    let candidates = if fenced.is_empty() {
        bare_json_values(text)
            .iter()
            .filter_map(calls_in_value)
            .collect()
    } else {
        fenced
    };
    match candidates.len() {
        0 => Err(FormatError {
            kind: FormatErrorKind::NothingFound,
            message: "no tool call found in the text: write one JSON object such as {\"name\": \"tool_name\", \"arguments\": {...}}".to_owned(),
        }),
        1 => Ok(candidates
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, raw)| ToolCall::new(format!("text-call-{index}"), raw.name, raw.arguments))
            .collect()),
        count => Err(FormatError {
            kind: FormatErrorKind::Ambiguous,
            message: format!(
                "found {count} separate tool-call candidates in the text; send exactly one JSON object, or one JSON array holding every call"
            ),
        }),
    }
}

struct RawCall {
    name: String,
    arguments: ToolArguments,
}

/// The contents of ``` fences that parse as JSON.
fn fenced_blocks(text: &str) -> Vec<Value> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(end) = after.find("```") else { break };
        let body = &after[..end];
        // Skip an info string such as `json` on the opening line.
        let body = match body.find('\n') {
            Some(newline) if !body[..newline].trim_start().starts_with(['{', '[']) => {
                &body[newline + 1..]
            }
            _ => body,
        };
        if let Ok(value) = serde_json::from_str::<Value>(body.trim()) {
            blocks.push(value);
        }
        rest = &after[end + 3..];
    }
    blocks
}

/// Every top-level JSON object or array in the text, scanning past prose.
fn bare_json_values(text: &str) -> Vec<Value> {
    let mut values = Vec::new();
    let mut offset = 0;
    while let Some(found) = text[offset..].find(['{', '[']) {
        let start = offset + found;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                values.push(value);
                offset = start + stream.byte_offset();
            }
            _ => offset = start + 1,
        }
    }
    values
}

/// The calls a JSON value stands for, if it is a call or a list of calls.
fn calls_in_value(value: &Value) -> Option<Vec<RawCall>> {
    match value {
        Value::Array(items) => {
            let calls: Option<Vec<RawCall>> = items
                .iter()
                .map(|item| item.as_object().and_then(call_in_object))
                .collect();
            calls.filter(|calls| !calls.is_empty())
        }
        Value::Object(object) => {
            if let Some(list) = LIST_KEYS.iter().find_map(|key| object.get(*key)) {
                return calls_in_value(list);
            }
            call_in_object(object).map(|call| vec![call])
        }
        _ => None,
    }
}

fn call_in_object(object: &Map<String, Value>) -> Option<RawCall> {
    if let Some(Value::Object(function)) = object.get("function") {
        return call_in_object(function);
    }
    let arguments = ARGUMENT_KEYS.iter().find_map(|key| object.get(*key));
    let name = TOOL_KEYS
        .iter()
        .find_map(|key| object.get(*key))
        .or_else(|| arguments.and(object.get("name")))?
        .as_str()?
        .to_owned();
    let arguments = match arguments {
        Some(Value::String(text)) => ToolArguments::Text(text.clone()),
        Some(value) => ToolArguments::Value(value.clone()),
        None => ToolArguments::Value(Value::Null),
    };
    Some(RawCall { name, arguments })
}
