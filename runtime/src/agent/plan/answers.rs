//! The outcomes of calls the loop answers itself: repeats, and calls cut off.

use std::time::Duration;

use serde_json::{Value, json};

use crate::agent::message::ModelCall;
use crate::call::ToolOutcome;
use crate::error::{ErrorCode, ToolError};

/// The error code of a repeat of a call that waits for approval.
pub(super) const REPEATED_CALL: &str = "repeated_call";

/// The outcome of `call`, answered from an earlier call's result (`first`, its id).
pub(crate) fn answered_from(
    call: &ModelCall,
    first: &str,
    result: Result<Value, ToolError>,
) -> ToolOutcome {
    let result = match result {
        Ok(value) => {
            let note = format!(
                "the same call as `{first}` earlier in this run: this is its result, and calling it again gives the same; answer from it"
            );
            Ok(json!({"note": note, "result": value}))
        }
        Err(mut error) => {
            error.message = format!(
                "the same call as `{first}` earlier in this run failed so, and would again: {}",
                error.message
            );
            Err(error)
        }
    };
    outcome(call, result)
}

/// The outcome of `call`, a repeat within one turn of the call that came to `first`.
pub(crate) fn same_as(call: &ModelCall, first: &ToolOutcome) -> ToolOutcome {
    let result = match &first.result {
        Ok(_) if first.is_content => Ok(first.result.clone().unwrap_or_default()),
        Ok(value) => Ok(json!({
            "note": format!("the same call as `{}` of this turn: this is its result", first.call_id),
            "result": value,
        })),
        Err(error) if error.code == ErrorCode::ApprovalRequired => Err(ToolError::new(
            REPEATED_CALL,
            format!(
                "not run: the same call as `{}` of this turn, which waits for approval",
                first.call_id
            ),
        )),
        Err(error) => Err(error.clone()),
    };
    let mut outcome = outcome(call, result);
    outcome.is_content = first.is_content && first.result.is_ok();
    outcome
}

/// The outcome of a call cut off at the model's output limit: not run, and why.
pub(crate) fn cut_off(call: &ModelCall) -> ToolOutcome {
    let error = ToolError::new(
        CUT_OFF,
        "not run: your reply stopped at the output limit before this call's arguments ended; call it again, with shorter arguments and fewer calls at once",
    );
    outcome(call, Err(error))
}

/// The error code of a call cut off at the model's output limit.
pub(super) const CUT_OFF: &str = "cut_off";

fn outcome(call: &ModelCall, result: Result<Value, ToolError>) -> ToolOutcome {
    ToolOutcome {
        call_id: call.id.as_str().into(),
        tool: call.name.as_str().into(),
        result,
        duration: Duration::ZERO,
        ui: None,
        is_content: false,
    }
}
