//! The tool's own look at a call before anyone is asked (its `review`), contained.

use std::sync::Arc;

use serde_json::Value;

use crate::context::{CallId, ToolContext};
use crate::error::{ErrorCode, ToolError};
use crate::registry::contain::contained;
use crate::registry::run::Asking;

pub(crate) fn review(asking: &Asking<'_>, arguments: &Value) -> Result<Option<Value>, ToolError> {
    let context = ToolContext {
        states: Arc::clone(&asking.config.states),
        caller: asking.caller.clone(),
        call_id: CallId(asking.call_id.into()),
        cancel: asking.cancel.child(),
        // A review looks at the call before it runs: nothing to report yet.
        progress: None,
        log: None,
        input: None,
        run_id: asking.run_id.map(Arc::from),
        step_of: asking.step_of.cloned(),
    };
    let tool = &asking.entry.definition.name;
    contained("the tool's review", tool, || {
        asking.entry.handler.review(&context, arguments)
    })
    .unwrap_or_else(|| Err(failed_inside("the tool's review of the call failed")))
}

/// Application code on the call's path panicked: the call is refused, not lost.
pub(crate) fn failed_inside(what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Panicked,
        format!(
            "{what} (an internal error, not a problem with your arguments); the call did not run"
        ),
    )
}
