//! Arguments as they arrive (text, bytes or a JSON value), checked for size and depth and
//! turned into the JSON object the schema is checked against.

use serde_json::{Map, Value, json};

use sha2::{Digest, Sha256};

use crate::error::{ErrorCode, ToolError};
use crate::util::digest::hex_digest;

/// The arguments of one call, in whatever form the provider gave them.
///
/// OpenAI sends a JSON string, Anthropic and Gemini a JSON object, an HTTP body is bytes.
/// All three are accepted; an empty string or `null` counts as no arguments (`{}`).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolArguments {
    /// JSON text, not yet parsed.
    Text(String),
    /// JSON bytes, not yet parsed (may be invalid UTF-8: that is reported, not panicked on).
    Bytes(Vec<u8>),
    /// An already parsed JSON value.
    Value(Value),
}

impl From<Value> for ToolArguments {
    fn from(value: Value) -> Self {
        ToolArguments::Value(value)
    }
}

impl From<String> for ToolArguments {
    fn from(text: String) -> Self {
        ToolArguments::Text(text)
    }
}

impl From<&str> for ToolArguments {
    fn from(text: &str) -> Self {
        ToolArguments::Text(text.to_owned())
    }
}

impl From<Vec<u8>> for ToolArguments {
    fn from(bytes: Vec<u8>) -> Self {
        ToolArguments::Bytes(bytes)
    }
}

impl From<Map<String, Value>> for ToolArguments {
    fn from(map: Map<String, Value>) -> Self {
        ToolArguments::Value(Value::Object(map))
    }
}

/// Size and nesting limits applied before arguments are parsed or validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentLimits {
    /// Largest accepted argument text, in bytes (for a parsed value: its approximate JSON size).
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (`{}` has depth 1).
    pub max_depth: usize,
}

impl Default for ArgumentLimits {
    /// 1 MiB and 64 levels: far beyond any real tool call, far below what could hurt.
    fn default() -> Self {
        ArgumentLimits {
            max_bytes: 1024 * 1024,
            max_depth: 64,
        }
    }
}

impl ToolArguments {
    /// The arguments, taken out of where they are held (what is left there reads as no
    /// arguments).
    #[inline]
    pub(crate) fn take(&mut self) -> ToolArguments {
        std::mem::replace(self, ToolArguments::Text(String::new()))
    }

    /// The arguments as JSON text, as a model would have written them.
    pub(crate) fn to_json_text(&self) -> String {
        match self {
            ToolArguments::Text(text) => text.clone(),
            ToolArguments::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            ToolArguments::Value(value) => value.to_string(),
        }
    }

    /// The arguments as a JSON object, or the error the model should see and, for arguments
    /// that could not be read, what the audit trail may keep of them: their size and a hash, never their text
    /// (which may hold a secret that cannot be found and redacted in unreadable JSON).
    /// The refusal is boxed: it is the cold path, and keeps the `Ok` small.
    pub(crate) fn into_object_or_summary(
        self,
        limits: &ArgumentLimits,
    ) -> Result<Value, Box<(ToolError, Value)>> {
        let value = match self {
            ToolArguments::Text(text) => parse_bytes(text.as_bytes(), limits)
                .map_err(|error| Box::new((error, unreadable(text.as_bytes()))))?,
            ToolArguments::Bytes(bytes) => parse_bytes(&bytes, limits)
                .map_err(|error| Box::new((error, unreadable(&bytes))))?,
            ToolArguments::Value(value) => match check_value(&value, limits) {
                Ok(()) => value,
                Err(error) => {
                    dismantle(value);
                    return Err(Box::new((error, json!({"unreadable": true}))));
                }
            },
        };
        match value {
            Value::Object(_) => Ok(value),
            Value::Null => Ok(Value::Object(Map::new())),
            other => Err(Box::new((
                ToolError::invalid_arguments(format!(
                    "the arguments must be a JSON object of the tool's parameters, but got {}",
                    describe(&other)
                )),
                unreadable(other.to_string().as_bytes()),
            ))),
        }
    }
}

/// What the audit trail keeps of arguments that could not be read: size and SHA-256.
fn unreadable(raw: &[u8]) -> Value {
    json!({
        "unreadable": true,
        "bytes": raw.len(),
        "sha256": hex_digest(&Sha256::digest(raw)),
    })
}

/// Writes integral numbers given as floats (`1.0`, `-0.0`, `1E1`) as integers, in place.
///
/// JSON Schema compares numbers by value, so `1.0` is an `integer` and passes the schema of a
/// `u8` parameter; serde would then refuse it as a float. Making them integers first gives
/// the schema and the function one rule. Floats beyond the 64-bit integers stay floats (no
/// integer parameter can hold them, and their range check says so).
pub(crate) fn integral_floats_as_integers(value: &mut Value) {
    // Only nested containers go on the stack: flat arguments, the usual case, allocate nothing.
    let mut stack: Vec<&mut Value> = Vec::new();
    let mut node = Some(value);
    while let Some(current) = node.take().or_else(|| stack.pop()) {
        match current {
            Value::Array(items) => stack.extend(items.iter_mut().filter(|item| needs_look(item))),
            Value::Object(map) => stack.extend(map.values_mut().filter(|item| needs_look(item))),
            Value::Number(number) => {
                if let Some(integer) = number
                    .as_f64()
                    .filter(|_| number.is_f64())
                    .and_then(as_integer)
                {
                    *number = integer;
                }
            }
            _ => {}
        }
    }
}

/// Whether a value may hold a float to rewrite: a float, or a container.
fn needs_look(value: &Value) -> bool {
    match value {
        Value::Number(number) => number.is_f64(),
        Value::Array(_) | Value::Object(_) => true,
        _ => false,
    }
}

fn as_integer(float: f64) -> Option<serde_json::Number> {
    // 2^63 and 2^64 are exact in f64; the bounds keep the casts below lossless.
    const I64_MIN: f64 = -9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    if float.fract() != 0.0 || !float.is_finite() {
        return None;
    }
    if (0.0..U64_END).contains(&float) || float == 0.0 {
        Some((float as u64).into())
    } else if (I64_MIN..0.0).contains(&float) {
        Some((float as i64).into())
    } else {
        None
    }
}

fn parse_bytes(bytes: &[u8], limits: &ArgumentLimits) -> Result<Value, ToolError> {
    if bytes.len() > limits.max_bytes {
        return Err(too_large(bytes.len(), limits));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    let depth = text_depth(bytes);
    if depth > limits.max_depth {
        return Err(too_deep(limits));
    }
    serde_json::from_slice(bytes).map_err(|error| {
        ToolError::invalid_arguments(format!(
            "the arguments are not valid JSON: {error}; send one JSON object of the tool's parameters"
        ))
        .with_details(json!({"line": error.line(), "column": error.column()}))
    })
}

/// Deepest nesting of `[`/`{` in JSON text, ignoring brackets inside strings.
fn text_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Checks depth and approximate size of a parsed value without recursion.
pub(crate) fn check_value(value: &Value, limits: &ArgumentLimits) -> Result<(), ToolError> {
    let mut size = 0usize;
    let mut stack = vec![(value, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        size += match node {
            Value::String(text) => text.len() + 2,
            Value::Array(items) => {
                stack.extend(items.iter().map(|item| (item, depth + 1)));
                items.len() + 2
            }
            Value::Object(map) => {
                stack.extend(map.values().map(|item| (item, depth + 1)));
                map.keys().map(|key| key.len() + 4).sum::<usize>() + 2
            }
            _ => 8,
        };
        let is_container = matches!(node, Value::Array(_) | Value::Object(_));
        if is_container && depth > limits.max_depth {
            return Err(too_deep(limits));
        }
        if size > limits.max_bytes {
            return Err(too_large(size, limits));
        }
    }
    Ok(())
}

/// Drops a value one node at a time: a deeply nested value would overflow the stack if
/// dropped recursively.
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, item)| item)),
            _ => {}
        }
    }
}

fn too_large(size: usize, limits: &ArgumentLimits) -> ToolError {
    ToolError::new(
        ErrorCode::ArgumentsTooLarge,
        format!(
            "the arguments are about {size} bytes, over the limit of {} bytes; send less data",
            limits.max_bytes
        ),
    )
    .with_details(json!({"size": size, "limit": limits.max_bytes}))
}

fn too_deep(limits: &ArgumentLimits) -> ToolError {
    ToolError::new(
        ErrorCode::ArgumentsTooDeep,
        format!(
            "the arguments nest arrays and objects more than {} levels deep; flatten them",
            limits.max_depth
        ),
    )
    .with_details(json!({"limit": limits.max_depth}))
}

/// "an array", "the string \"x\"", ... for messages.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.len() <= 40 => format!("the string {s:?}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_of_text_ignores_brackets_in_strings() {
        assert_eq!(text_depth(br#"{"a": "[[[{{{", "b": [1, {"c": 2}]}"#), 3);
        assert_eq!(text_depth(br#"{"a": "\"[[["}"#), 1);
    }

    #[test]
    fn integral_floats_become_integers_and_others_stay() {
        let mut value =
            json!({"a": 1.0, "b": -0.0, "c": 1E1, "d": [2.5, -3.0], "e": 1e300, "f": 7});
        integral_floats_as_integers(&mut value);
        assert_eq!(
            value,
            json!({"a": 1, "b": 0, "c": 10, "d": [2.5, -3], "e": 1e300, "f": 7})
        );
        assert!(value["a"].is_u64() && value["d"][1].is_i64());
    }

    #[test]
    fn unreadable_arguments_are_summarized_without_their_text() {
        let limits = ArgumentLimits::default();
        let (_, summary) = *ToolArguments::from(r#"{"password": "hunter2""#)
            .into_object_or_summary(&limits)
            .unwrap_err();
        assert!(!summary.to_string().contains("hunter2"));
        assert_eq!(summary["bytes"], 22);
        assert_eq!(summary["sha256"].as_str().unwrap().len(), 64);
    }

    #[test]
    fn empty_and_null_mean_no_arguments() {
        let limits = ArgumentLimits::default();
        assert_eq!(
            ToolArguments::from("  ")
                .into_object_or_summary(&limits)
                .unwrap(),
            json!({})
        );
        assert_eq!(
            ToolArguments::from(Value::Null)
                .into_object_or_summary(&limits)
                .unwrap(),
            json!({})
        );
    }
}
