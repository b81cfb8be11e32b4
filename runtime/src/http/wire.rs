//! Bodies on the wire: call requests in, outcomes out.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::arguments::ToolArguments;
use crate::call::{ToolCall, ToolOutcome};
use crate::error::ToolError;
use crate::http::errors::ApiError;

/// One outcome as JSON: `{"call_id", "tool", "ok", "result" | "error", "duration_ms", "ui"?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeBody {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// Whether the call succeeded.
    pub ok: bool,
    /// The result, on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// How long the call took.
    pub duration_ms: f64,
    /// The UI component that renders the result, if the tool names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui: Option<String>,
    /// `result` is a list of content blocks (images, audio, resources, text).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub content: bool,
}

impl From<ToolOutcome> for OutcomeBody {
    fn from(outcome: ToolOutcome) -> Self {
        let duration_ms = outcome.duration.as_secs_f64() * 1000.0;
        let (ok, result, error) = match outcome.result {
            Ok(value) => (true, Some(value), None),
            Err(error) => (false, None, Some(error)),
        };
        OutcomeBody {
            call_id: outcome.call_id,
            tool: outcome.tool,
            ok,
            result,
            error,
            duration_ms,
            ui: outcome.ui,
            content: outcome.is_content,
        }
    }
}

/// What `POST /tools/call` was asked.
pub(crate) struct CallRequest {
    pub(crate) calls: Vec<ToolCall>,
    /// A single call (answered with one outcome) rather than a batch.
    pub(crate) single: bool,
    pub(crate) dry_run: bool,
}

const SHAPE: &str = "send {\"name\": \"tool\", \"arguments\": {...}} for one call, or {\"calls\": [...]} for a batch";

pub(crate) fn parse_call_request(body: &[u8]) -> Result<CallRequest, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| malformed(format!("the body is not valid JSON ({error}); {SHAPE}")))?;
    let dry_run = value
        .get("dry_run")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    // The body is taken apart, not copied: names and arguments move into the calls.
    let (items, single) = match value {
        Value::Array(items) => (items, false),
        Value::Object(mut map) => match map.remove("calls") {
            Some(Value::Array(items)) => (items, false),
            Some(_) => return Err(malformed(format!("`calls` must be an array; {SHAPE}"))),
            None => (vec![Value::Object(map)], true),
        },
        _ => {
            return Err(malformed(format!(
                "the body must be a JSON object or array; {SHAPE}"
            )));
        }
    };
    let calls = items
        .into_iter()
        .enumerate()
        .map(|(index, item)| call_of(item, index, single))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CallRequest {
        calls,
        single,
        dry_run,
    })
}

fn call_of(item: Value, index: usize, single: bool) -> Result<ToolCall, ApiError> {
    let place = || {
        if single {
            "the call".to_owned()
        } else {
            format!("calls[{index}]")
        }
    };
    let mut item = match item {
        Value::Object(item) => item,
        _ => Map::new(),
    };
    let name = match item.remove("name") {
        Some(Value::String(name)) => name,
        _ => {
            let place = place();
            return Err(malformed(format!("{place} has no string `name`; {SHAPE}")));
        }
    };
    let id = match item.remove("id") {
        Some(Value::String(id)) => id,
        Some(Value::Number(number)) => number.to_string(),
        None | Some(Value::Null) => format!("call-{index}"),
        Some(_) => {
            let place = place();
            return Err(malformed(format!(
                "{place} has an `id` that is neither a string nor a number"
            )));
        }
    };
    let arguments = match item.remove("arguments") {
        Some(Value::String(text)) => ToolArguments::Text(text),
        Some(other) => ToolArguments::Value(other),
        None => ToolArguments::Value(Value::Null),
    };
    Ok(ToolCall::new(id, name, arguments))
}

fn malformed(message: String) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::BAD_REQUEST,
        "malformed_body",
        message,
    )
}
