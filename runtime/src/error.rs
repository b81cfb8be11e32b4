//! The error a tool call ends with, as the model reads it.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A stable, machine-readable reason for a failed call.
///
/// Codes are strings on the wire (`"invalid_arguments"`, ...) and never change meaning.
/// Tools may use their own codes with [`ErrorCode::Custom`] (e.g. `"not_found"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// No tool of that name is visible to the caller (also used for hidden tools).
    UnknownTool,
    /// The tool exists but the caller's role may not use it; only with
    /// [`reveal_hidden_tools(true)`](crate::RegistryBuilder::reveal_hidden_tools), otherwise
    /// such a call answers [`UnknownTool`](ErrorCode::UnknownTool).
    Forbidden,
    /// The arguments are not valid JSON, not an object, or break the input schema.
    InvalidArguments,
    /// The arguments exceed the registry's size limit.
    ArgumentsTooLarge,
    /// The arguments nest deeper than the registry's depth limit.
    ArgumentsTooDeep,
    /// The tool did not finish within its timeout.
    Timeout,
    /// The call was cancelled through its cancellation token.
    Cancelled,
    /// The tool panicked; the panic was contained.
    Panicked,
    /// The tool ran and returned an error.
    ExecutionFailed,
    /// The policy refuses this call.
    Denied,
    /// The call needs a person's approval and has not run; `details.ticket` redeems it.
    ApprovalRequired,
    /// A person refused the call.
    ApprovalDenied,
    /// The call needs answers from the user that only an MCP client can give
    /// ([`InputRequired`](crate::input::InputRequired) in `details`); it has not finished.
    InputRequired,
    /// Too many calls by this caller or of this tool; `details.retry_after_ms` says when.
    RateLimited,
    /// The batch has more calls than the registry accepts at once.
    BatchTooLarge,
    /// A [budget](crate::budget) of the caller or the run is spent; the call did not run.
    /// `details` is a [`BudgetExhausted`](crate::budget::BudgetExhausted).
    BudgetExhausted,
    /// A store the call depends on (approvals, rate limits, audit) could not be reached; the
    /// call did not run. Worth retrying later.
    StoreUnavailable,
    /// The call needs what the async runtime it was made on does not give: a Tokio runtime
    /// (for a synchronous tool, or to keep a time limit), with its timers. A setup error of
    /// the application, not of the call; the message says what to change.
    RuntimeUnavailable,
    /// A code chosen by the tool itself.
    Custom(Cow<'static, str>),
}

/// The codes the library itself uses, each with its wire form: one table for both
/// directions.
macro_rules! known_codes {
    ($($variant:ident => $wire:literal,)*) => {
        impl ErrorCode {
            /// The code as it appears on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $(ErrorCode::$variant => $wire,)*
                    ErrorCode::Custom(code) => code,
                }
            }

            /// The wire form, borrowed from the table where it is one of the library's codes.
            pub(crate) fn wire(&self) -> Cow<'static, str> {
                match self {
                    $(ErrorCode::$variant => Cow::Borrowed($wire),)*
                    ErrorCode::Custom(code) => code.clone(),
                }
            }

            /// Reads a code from its wire form; unknown strings become [`ErrorCode::Custom`].
            pub fn parse(code: &str) -> ErrorCode {
                match code {
                    $($wire => ErrorCode::$variant,)*
                    other => ErrorCode::Custom(Cow::Owned(other.to_owned())),
                }
            }
        }
    };
}

known_codes! {
    UnknownTool => "unknown_tool",
    Forbidden => "forbidden",
    InvalidArguments => "invalid_arguments",
    ArgumentsTooLarge => "arguments_too_large",
    ArgumentsTooDeep => "arguments_too_deep",
    Timeout => "timeout",
    Cancelled => "cancelled",
    Panicked => "panicked",
    ExecutionFailed => "execution_failed",
    Denied => "denied",
    ApprovalRequired => "approval_required",
    ApprovalDenied => "approval_denied",
    InputRequired => "input_required",
    RateLimited => "rate_limited",
    BatchTooLarge => "batch_too_large",
    BudgetExhausted => "budget_exhausted",
    StoreUnavailable => "store_unavailable",
    RuntimeUnavailable => "runtime_unavailable",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = Cow::<str>::deserialize(deserializer)?;
        Ok(ErrorCode::parse(&code))
    }
}

/// Why a call failed: a stable [`code`](ErrorCode), a message written for the model, and
/// optional structured details (for example every schema violation with its JSON path).
///
/// Tools return it directly (`Result<T, ToolError>`) or any `E: Display`, which becomes
/// an [`ErrorCode::ExecutionFailed`] error carrying `E`'s text.
///
/// ```
/// use toolgate::{ErrorCode, ToolError};
///
/// let error = ToolError::new("not_found", "no pet with id 7; list the pets first");
/// assert_eq!(error.code, ErrorCode::Custom("not_found".into()));
/// assert_eq!(error.to_string(), "not_found: no pet with id 7; list the pets first");
/// ```
#[derive(Clone, PartialEq, Deserialize)]
pub struct ToolError {
    /// Structured details, such as the list of schema violations.
    #[serde(default)]
    pub details: Option<Value>,
    /// The stable reason.
    pub code: ErrorCode,
    /// What went wrong and, where possible, how to fix the call.
    pub message: String,
}

impl Serialize for ToolError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let fields = if self.details.is_some() { 3 } else { 2 };
        let mut error = serializer.serialize_struct("ToolError", fields)?;
        error.serialize_field("code", &self.code)?;
        error.serialize_field("message", &self.message)?;
        match &self.details {
            Some(details) => error.serialize_field("details", details)?,
            None => error.skip_field("details")?,
        }
        error.end()
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("ToolError")
            .field("code", &self.code)
            .field("message", &self.message)
            .field("details", &self.details)
            .finish()
    }
}

impl ToolError {
    /// An error with a code (an [`ErrorCode`] or a custom code string) and a message.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Self {
        ToolError {
            code: code.into(),
            message: message.into(),
            details: None,
        }
    }

    /// The tool ran and failed: [`ErrorCode::ExecutionFailed`].
    pub fn execution(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::ExecutionFailed, message)
    }

    /// The arguments were wrong: [`ErrorCode::InvalidArguments`].
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::InvalidArguments, message)
    }

    /// Attaches structured details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<&'static str> for ErrorCode {
    fn from(code: &'static str) -> Self {
        match ErrorCode::parse(code) {
            ErrorCode::Custom(_) => ErrorCode::Custom(Cow::Borrowed(code)),
            known => known,
        }
    }
}

impl From<String> for ErrorCode {
    fn from(code: String) -> Self {
        ErrorCode::parse(&code)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ErrorCode, ToolError};

    #[test]
    fn reads_and_writes_as_code_message_details() {
        let plain = ToolError::new("not_found", "no pet with id 7");
        let detailed = ToolError::invalid_arguments("bad").with_details(json!({"path": "/a"}));
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"code":"not_found","message":"no pet with id 7"}"#
        );
        assert_eq!(
            serde_json::to_string(&detailed).unwrap(),
            r#"{"code":"invalid_arguments","message":"bad","details":{"path":"/a"}}"#
        );
        for error in [plain, detailed] {
            let back: ToolError =
                serde_json::from_value(serde_json::to_value(&error).unwrap()).unwrap();
            assert_eq!(back, error);
        }
        let read: ToolError =
            serde_json::from_str(r#"{"message": "m", "code": "timeout"}"#).unwrap();
        assert_eq!((read.code, read.details), (ErrorCode::Timeout, None));
        assert_eq!(
            format!("{:?}", ToolError::new("x", "y")),
            r#"ToolError { code: Custom("x"), message: "y", details: None }"#
        );
    }
}
