//! The tool calls a decided step was part of (a workflow's), taken up again with the step's
//! outcome: innermost first, each as the caller who made it (who must still see the tool),
//! under the tool's time limit, its panic contained, its end recorded. A call that waits
//! again (at a later step) stops the chain there: its new step carries the rest.

use std::sync::Arc;

use crate::call::ToolOutcome;
use crate::caller::Caller;
use crate::context::{CallId, CancellationToken, ToolContext};
use crate::error::ErrorCode;
use crate::paused::{PausedCall, StepOf};
use crate::registry::Config;
use crate::registry::cancel::Cancel;
use crate::registry::find::{seen, unseen};
use crate::registry::perform::{contain_tool, ran, wait};
use crate::registry::record::{Trail, finish};
use crate::registry::snapshot::Snapshot;
use crate::tool::ToolResult;

/// The outcome of the outermost call that ends, given the decided `step`'s outcome (the
/// step's own, when it was a step of no call).
pub(crate) async fn go_on(
    config: &Config,
    snapshot: &Snapshot,
    (caller, decider): (&Caller, &Caller),
    paused: Option<PausedCall>,
    mut step: ToolOutcome,
    run_id: Option<&str>,
) -> ToolOutcome {
    let Some(mut paused) = paused else {
        return step;
    };
    loop {
        let outer = paused.outer.take();
        let context = ToolContext {
            states: Arc::clone(&config.states),
            caller: caller.clone(),
            call_id: CallId(paused.call_id.as_str().into()),
            cancel: CancellationToken::new(),
            progress: None,
            log: None,
            input: None,
            run_id: run_id.map(Arc::from),
            step_of: outer.as_deref().map(StepOf::of_paused),
        };
        let started = crate::util::time::now();
        let result = one(config, snapshot, context, &paused, step).await;
        let mut trail = Trail {
            decision: "resumed",
            approver: Some(decider.id().to_owned()),
            ..Trail::of(run_id)
        };
        let (call_id, tool) = (paused.call_id.into(), paused.tool.into());
        let outcome = finish(config, caller, call_id, tool, result, started, &mut trail);
        let outcome = outcome.written().await;
        let waits_again =
            matches!(&outcome.result, Err(error) if error.code == ErrorCode::ApprovalRequired);
        match outer {
            Some(next) if !waits_again => (paused, step) = (*next, outcome),
            _ => return outcome,
        }
    }
}

/// One call taken up again: its tool's result.
async fn one(
    config: &Config,
    snapshot: &Snapshot,
    context: ToolContext,
    paused: &PausedCall,
    step: ToolOutcome,
) -> ToolResult {
    let caller = context.caller.clone();
    let rank = config.roles.rank(caller.role());
    let Some(entry) = seen(config, snapshot, (rank, &caller), &paused.tool) else {
        // The caller no longer sees the tool: to it, the call was of no tool.
        return Err(unseen(config, snapshot, (rank, &caller), &paused.tool));
    };
    let token = context.cancel.clone();
    let future = entry.handler.go_on(context, paused.state.clone(), step);
    let finished = wait(
        config,
        entry,
        contain_tool(entry, future),
        Some(token),
        Cancel(None),
    )
    .await;
    match finished {
        Ok(finished) => ran(config, entry, (&caller, &paused.call_id), finished),
        Err(stopped) => Err(stopped),
    }
}
