//! One requested call and what came of it.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use smol_str::SmolStr;

use crate::arguments::ToolArguments;
use crate::content::Content;
use crate::error::ToolError;

/// The blocks of a successful content result.
pub(crate) fn content_of(
    is_content: bool,
    result: &Result<Value, ToolError>,
) -> Option<Vec<Content>> {
    match result {
        Ok(value) if is_content => crate::content::blocks_of(value).ok(),
        _ => None,
    }
}

/// A call a model asked for: its id, the tool's name and the arguments.
///
/// ```
/// use serde_json::json;
/// use toolgate::ToolCall;
///
/// // Arguments as a value (Anthropic, Gemini) ...
/// let a = ToolCall::new("call_1", "get_clinic_hours", json!({"day": "monday"}));
/// // ... or as JSON text (OpenAI), parsed and checked by the registry.
/// let b = ToolCall::new("call_2", "get_clinic_hours", r#"{"day": "monday"}"#);
/// assert_eq!(a.name, b.name);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id for the call, echoed in the outcome.
    pub id: SmolStr,
    /// The tool's name.
    pub name: SmolStr,
    /// The arguments, in whatever form they came.
    pub arguments: ToolArguments,
}

impl ToolCall {
    /// A call with an id, a tool name and arguments (a `serde_json::Value`, a JSON string,
    /// or JSON bytes).
    #[inline]
    pub fn new(
        id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        arguments: impl Into<ToolArguments>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// The call, taken out of where it is held (what is left there is empty).
    #[inline]
    pub(crate) fn take(&mut self) -> ToolCall {
        ToolCall {
            id: std::mem::take(&mut self.id),
            name: std::mem::take(&mut self.name),
            arguments: self.arguments.take(),
        }
    }
}

/// The result of one call: always produced, one per call, whatever happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutcome {
    /// The call's id, as given.
    pub call_id: SmolStr,
    /// The tool's name, as given.
    pub tool: SmolStr,
    /// The tool's JSON result, or the error for the model.
    pub result: Result<Value, ToolError>,
    /// Time from receiving the call to its outcome.
    #[serde(serialize_with = "serialize_millis", rename = "duration_ms")]
    pub duration: Duration,
    /// The UI component that renders the result (`#[tool(ui = "...")]`), when the tool names
    /// one and the caller may see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui: Option<String>,
    /// The result is a list of [`Content`] blocks (see [`ToolOutcome::content`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_content: bool,
}

impl ToolOutcome {
    /// Whether the call succeeded.
    pub fn is_ok(&self) -> bool {
        self.result.is_ok()
    }

    /// The error, if the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        self.result.as_ref().err()
    }

    /// The result's content blocks, when the tool returns [`content`](crate::content).
    pub fn content(&self) -> Option<Vec<Content>> {
        content_of(self.is_content, &self.result)
    }
}

fn serialize_millis<S: serde::Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(crate::util::time::millis(*duration))
}
