//! Calls a tool makes as steps of its own call (a workflow's). When such a step waits for a
//! person's decision under a ticket, the tool's call waits with it: what the tool needs to
//! go on is kept with the step, and once the step is decided, wherever that happens, the
//! tool goes on from there ([`Tool::go_on`](crate::Tool::go_on)) as the same caller, and its
//! call ends with a record of its own.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Marks a call as a step of another tool's call ([`CallOptions::step_of`](crate::CallOptions::step_of)),
/// so that the tool's call can go on if the step waits for a person's decision.
#[derive(Clone)]
pub struct StepOf {
    tool: String,
    call_id: String,
    state: Arc<dyn Fn() -> Value + Send + Sync>,
    outer: Option<Box<StepOf>>,
}

impl StepOf {
    /// A step of the call `call_id` of `tool`. `state` gives what the tool needs to go on;
    /// it is asked only if the step waits. `outer` is the call the tool's own call is a
    /// step of, if any ([`ToolContext::step_of`](crate::ToolContext::step_of)): it goes
    /// on after the tool's call ends.
    pub fn new(
        tool: impl Into<String>,
        call_id: impl Into<String>,
        state: impl Fn() -> Value + Send + Sync + 'static,
        outer: Option<StepOf>,
    ) -> Self {
        StepOf {
            tool: tool.into(),
            call_id: call_id.into(),
            state: Arc::new(state),
            outer: outer.map(Box::new),
        }
    }

    /// What is kept with a step that waits: this call's state, and the calls around it.
    pub(crate) fn paused(&self) -> PausedCall {
        PausedCall {
            tool: self.tool.clone(),
            call_id: self.call_id.clone(),
            state: (self.state)(),
            outer: self.outer.as_ref().map(|outer| Box::new(outer.paused())),
        }
    }

    /// The step mark of a call taken up again from what was kept.
    pub(crate) fn of_paused(paused: &PausedCall) -> Self {
        let state = paused.state.clone();
        StepOf {
            tool: paused.tool.clone(),
            call_id: paused.call_id.clone(),
            state: Arc::new(move || state.clone()),
            outer: paused
                .outer
                .as_deref()
                .map(|outer| Box::new(Self::of_paused(outer))),
        }
    }
}

impl fmt::Debug for StepOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepOf")
            .field("tool", &self.tool)
            .field("call_id", &self.call_id)
            .field("outer", &self.outer)
            .finish_non_exhaustive()
    }
}

/// A tool's call that waits with one of its steps, as kept with the step's pending call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PausedCall {
    /// The tool whose call waits.
    pub tool: String,
    /// Its call's id.
    pub call_id: String,
    /// What the tool kept to go on with.
    pub state: Value,
    /// The call this one is a step of, if any: it goes on once this one ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outer: Option<Box<PausedCall>>,
}
