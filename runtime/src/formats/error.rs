//! Why a provider's message could not be read as tool calls.

use std::fmt;

/// What kind of problem a [`FormatError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatErrorKind {
    /// The message does not have the provider's shape (a field missing or of the wrong type).
    Malformed,
    /// Free text held no tool call.
    NothingFound,
    /// Free text held several separate candidates and it is unclear which is meant.
    Ambiguous,
}

/// A provider message that could not be read; says what was expected where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The kind of problem.
    pub kind: FormatErrorKind,
    /// What was wrong, and where.
    pub message: String,
}

impl FormatError {
    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        FormatError {
            kind: FormatErrorKind::Malformed,
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// A required string field of a JSON object, or a malformed-message error naming it.
pub(crate) fn string_field<'a>(
    object: &'a serde_json::Value,
    field: &str,
    place: &str,
) -> Result<&'a str, FormatError> {
    object
        .get(field)
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| FormatError::malformed(format!("{place} has no string `{field}`")))
}

/// A call's arguments from a message field: JSON text (OpenAI sends a string) or a JSON
/// value (Anthropic, Gemini, MCP); a missing field is no arguments.
pub(crate) fn arguments_field(object: &serde_json::Value, field: &str) -> crate::ToolArguments {
    match object.get(field) {
        Some(serde_json::Value::String(text)) => crate::ToolArguments::Text(text.clone()),
        Some(other) => crate::ToolArguments::Value(other.clone()),
        None => crate::ToolArguments::Value(serde_json::Value::Null),
    }
}
