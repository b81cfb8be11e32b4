//! Going on after a person decided: apply the decisions through the registry (which runs an
//! approved call once, as the run's caller), take in what was decided elsewhere, and when
//! no call waits any more, feed the turn's results to the model and go on.

use std::time::Duration;

use super::builder::Settings;
use super::driver::{self, TOOL_CALL_LIMIT};
use super::message::{Message, ToolResult};
use super::run::{CallDecision, Decision, PendingApproval, Run, RunId, RunStatus, Slot};
use super::{AgentError, RunOptions};
use crate::approval::TicketError;
use crate::call::ToolOutcome;
use crate::caller::Caller;
use crate::error::{ErrorCode, ToolError};

pub(crate) async fn resume(
    settings: &Settings,
    who: &Caller,
    id: &RunId,
    decisions: Vec<CallDecision>,
    options: &RunOptions,
) -> Result<Run, AgentError> {
    let mut run = settings
        .store
        .take(id)
        .await
        .map_err(AgentError::Store)?
        .ok_or(AgentError::RunNotFound)?;
    if let Err(error) = check_request(&run, who, &decisions) {
        settings.store.put(run).await.map_err(AgentError::Store)?;
        return Err(error);
    }
    if run.caller.id() == who.id() {
        // Its owner goes on with the authority it presents now, not the one it started with.
        run.caller = who.clone();
    }
    for decision in &decisions {
        if let Err(error) = apply(settings, &mut run, who, decision).await {
            // What was decided so far stays decided; the run still waits.
            let run = refresh_pending(run);
            settings.store.put(run).await.map_err(AgentError::Store)?;
            return Err(error);
        }
    }
    if let Err(error) = take_in_decided_elsewhere(settings, &mut run).await {
        // The run waits as it did; it can be resumed once the store answers again.
        settings.store.put(run).await.map_err(AgentError::Store)?;
        return Err(error);
    }
    if run
        .waiting
        .iter()
        .any(|slot| matches!(slot, Slot::Waiting(_)))
    {
        return driver::finish(settings, refresh_pending(run)).await;
    }
    let limit_reached = feed_results(&mut run);
    if limit_reached {
        run.status = RunStatus::ToolCallLimit {
            calls: settings.max_tool_calls,
        };
        return driver::finish(settings, run).await;
    }
    driver::drive(settings, run, options).await
}

/// The run waits, every decision names a waiting call, and `who` may touch the run: its
/// owner, or someone bringing decisions (which the registry then checks).
fn check_request(run: &Run, who: &Caller, decisions: &[CallDecision]) -> Result<(), AgentError> {
    let owner = run.caller.id() == who.id();
    if !owner && decisions.is_empty() {
        return Err(AgentError::RunNotFound);
    }
    if !matches!(run.status, RunStatus::NeedsApproval { .. }) {
        if !owner {
            return Err(AgentError::RunNotFound);
        }
        let status = run.status.name();
        return Err(AgentError::NotWaiting { status });
    }
    for decision in decisions {
        if waiting_call(run, &decision.call_id).is_none() {
            let call_id = crate::bounded::clip(&decision.call_id, crate::bounded::MAX_QUOTED);
            return Err(AgentError::UnknownCall {
                call_id: call_id.into_owned(),
            });
        }
    }
    Ok(())
}

fn waiting_call<'r>(run: &'r Run, call_id: &str) -> Option<&'r PendingApproval> {
    run.waiting.iter().find_map(|slot| match slot {
        Slot::Waiting(waiting) if waiting.call_id == call_id => Some(waiting),
        _ => None,
    })
}

/// One decision, through the registry; its outcome takes the call's slot.
async fn apply(
    settings: &Settings,
    run: &mut Run,
    who: &Caller,
    decision: &CallDecision,
) -> Result<(), AgentError> {
    let Some(waiting) = waiting_call(run, &decision.call_id).cloned() else {
        // Two decisions about one call: the first one counts.
        return Ok(());
    };
    let registry = &settings.registry;
    let decided = match &decision.decision {
        Decision::Approve => registry.approve(&waiting.ticket, who).await,
        Decision::Deny { reason } => registry.deny(&waiting.ticket, who, reason).await,
    };
    let outcome = match decided {
        Ok(outcome) => outcome,
        Err(TicketError::Expired) => expired(&waiting),
        Err(error) => match decided_elsewhere(settings, &waiting).await? {
            Some(outcome) => outcome,
            None => {
                return Err(AgentError::Decision {
                    call_id: waiting.call_id.clone(),
                    error,
                });
            }
        },
    };
    settle(settings, run, &waiting, outcome);
    Ok(())
}

/// Calls decided through other routes (the approval API) since the run stopped, and calls
/// whose ticket expired undecided.
async fn take_in_decided_elsewhere(settings: &Settings, run: &mut Run) -> Result<(), AgentError> {
    let now = crate::time::now_secs();
    let waiting: Vec<PendingApproval> = run
        .waiting
        .iter()
        .filter_map(|slot| match slot {
            Slot::Waiting(waiting) => Some(waiting.clone()),
            Slot::Done(_) => None,
        })
        .collect();
    for waiting in waiting {
        let outcome = match decided_elsewhere(settings, &waiting).await? {
            Some(outcome) => outcome,
            None if waiting.expires <= now => expired(&waiting),
            None => continue,
        };
        settle(settings, run, &waiting, outcome);
    }
    Ok(())
}

async fn decided_elsewhere(
    settings: &Settings,
    waiting: &PendingApproval,
) -> Result<Option<ToolOutcome>, AgentError> {
    let decided = settings.registry.decided_call(&waiting.ticket_id).await;
    let outcome = decided
        .map_err(AgentError::Store)?
        .map(|decided| ToolOutcome {
            call_id: waiting.call_id.as_str().into(),
            tool: waiting.tool.as_str().into(),
            result: decided.result,
            duration: Duration::ZERO,
            ui: None,
            is_content: decided.is_content,
        });
    Ok(outcome)
}

fn expired(waiting: &PendingApproval) -> ToolOutcome {
    let error = ToolError::new(
        ErrorCode::ApprovalDenied,
        "no one decided about this call before its approval request expired; it did not run",
    );
    ToolOutcome {
        call_id: waiting.call_id.as_str().into(),
        tool: waiting.tool.as_str().into(),
        result: Err(error),
        duration: Duration::ZERO,
        ui: None,
        is_content: false,
    }
}

/// The call's slot takes its result, and the run records the call.
fn settle(settings: &Settings, run: &mut Run, waiting: &PendingApproval, outcome: ToolOutcome) {
    let result = driver::record(settings, run, waiting.arguments.clone(), outcome);
    for slot in &mut run.waiting {
        if matches!(slot, Slot::Waiting(w) if w.call_id == waiting.call_id) {
            *slot = Slot::Done(result);
            break;
        }
    }
}

/// The status lists the calls still waiting.
fn refresh_pending(mut run: Run) -> Run {
    let pending = driver::waiting_calls(&run.waiting);
    run.status = RunStatus::NeedsApproval { pending };
    run
}

/// Every call of the turn is decided: its results go to the model. Says whether calls were
/// refused for the tool-call limit (the run then ends).
fn feed_results(run: &mut Run) -> bool {
    let results: Vec<ToolResult> = std::mem::take(&mut run.waiting)
        .into_iter()
        .filter_map(|slot| match slot {
            Slot::Done(result) => Some(result),
            Slot::Waiting(_) => None,
        })
        .collect();
    let limit_reached = results.iter().any(
        |result| matches!(&result.result, Err(error) if error.code.as_str() == TOOL_CALL_LIMIT),
    );
    run.transcript.push(Message::ToolResults { results });
    limit_reached
}
