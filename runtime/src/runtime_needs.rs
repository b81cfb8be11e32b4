//! What a call needs of the async runtime it is made on (Tokio, with its timers), and the
//! error a call ends with where that is missing: a setup error of the application, said as
//! such, not a contained panic.

use crate::error::{ErrorCode, ToolError};

/// The call was made outside any Tokio runtime, which it needs to `need` (a phrase: "keep
/// the tool's time limit").
pub(crate) fn outside_tokio(need: &str) -> ToolError {
    unavailable(format!(
        "the call was made outside a Tokio runtime, which it needs to {need}: make it from within one (`#[tokio::main]`, or `Runtime::block_on`)"
    ))
}

/// The call needs what its runtime does not give, as `message` says.
pub(crate) fn unavailable(message: String) -> ToolError {
    ToolError::new(ErrorCode::RuntimeUnavailable, message)
}
