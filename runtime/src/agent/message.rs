//! A conversation in no provider's shape: each model client writes it in its own.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{ToolCall, ToolOutcome};
use crate::error::ToolError;

/// One message of a run's transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user wrote.
    User {
        /// The text.
        text: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// Its text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The tools it called, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<ModelCall>,
    },
    /// The results of the previous assistant message's calls: one per call, in call order.
    ToolResults {
        /// The results.
        results: Vec<ToolResult>,
    },
}

impl Message {
    /// About how many bytes of text the message sends (for estimates, not exact).
    pub(crate) fn text_bytes(&self) -> usize {
        match self {
            Message::User { text } => text.len(),
            Message::Assistant { text, calls } => {
                let calls: usize = calls
                    .iter()
                    .map(|call| call.name.len() + call.arguments.len())
                    .sum();
                text.as_ref().map_or(0, String::len) + calls
            }
            Message::ToolResults { results } => results
                .iter()
                .map(|result| match &result.result {
                    Ok(value) => serde_json::to_vec(value).map_or(0, |text| text.len()),
                    Err(error) => error.message.len(),
                })
                .sum(),
        }
    }
}

/// A tool call as the model wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// The provider's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model wrote them (they may not parse).
    pub arguments: String,
}

impl ModelCall {
    /// The call as the registry takes it.
    pub fn to_tool_call(&self) -> ToolCall {
        ToolCall::new(self.id.clone(), self.name.clone(), self.arguments.clone())
    }

    /// The arguments as a JSON value, for providers that send objects; `{}` when the text
    /// is not a JSON object (its error was already reported to the model).
    pub fn arguments_value(&self) -> Value {
        match serde_json::from_str(&self.arguments) {
            Ok(Value::Object(object)) => Value::Object(object),
            _ => Value::Object(Default::default()),
        }
    }

    /// The arguments as JSON text, for providers that send text: as the model wrote them
    /// when they are a JSON object, else `{}` (a reply cut off mid-call, `{"pattern`, is
    /// refused by servers that read the history, and its error was already reported to the
    /// model as the call's result).
    pub fn arguments_text(&self) -> std::borrow::Cow<'_, str> {
        match serde_json::from_str::<Value>(&self.arguments) {
            Ok(Value::Object(_)) => std::borrow::Cow::Borrowed(&self.arguments),
            _ => std::borrow::Cow::Borrowed("{}"),
        }
    }
}

impl From<&ToolCall> for ModelCall {
    fn from(call: &ToolCall) -> Self {
        ModelCall {
            id: call.id.to_string(),
            name: call.name.to_string(),
            arguments: call.arguments.to_json_text(),
        }
    }
}

/// What one call came to, as the model reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The result (cut to the run's size limit, with a marker), or the error.
    pub result: Result<Value, ToolError>,
    /// The result is [`Content`](crate::content::Content) blocks (see
    /// [`ToolOutcome::content`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_content: bool,
}

impl ToolResult {
    /// The result as a [`ToolOutcome`], for the [`formats`](crate::formats) writers.
    pub fn to_outcome(&self) -> ToolOutcome {
        ToolOutcome {
            call_id: self.call_id.as_str().into(),
            tool: self.tool.as_str().into(),
            result: self.result.clone(),
            duration: std::time::Duration::ZERO,
            ui: None,
            is_content: self.is_content,
        }
    }
}

/// The results of a turn as [`ToolOutcome`]s, in order.
#[cfg(feature = "models")]
pub(crate) fn outcomes(results: &[ToolResult]) -> Vec<ToolOutcome> {
    results.iter().map(ToolResult::to_outcome).collect()
}
