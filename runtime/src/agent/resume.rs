//! Deciding a run's waiting calls, and going on after: decisions go through the registry
//! (which runs an approved call once, as the caller who made it); what was decided
//! elsewhere is taken in; only the run's owner, as it presents now, feeds the turn's
//! results to the model and goes on.

use std::time::Duration;

use super::builder::Settings;
use super::driver::{self, TOOL_CALL_LIMIT};
use super::message::{Message, ToolResult};
use super::run::{CallDecision, Decision, PendingApproval, Run, RunId, RunStatus, Slot};
use super::{AgentError, Decided, RunOptions};
use crate::approval::TicketError;
use crate::call::ToolOutcome;
use crate::caller::Caller;
use crate::error::{ErrorCode, ToolError};

/// The run's owner goes on, with the authority it presents now: calls waiting for tools it
/// may no longer see are withdrawn, its own decisions (if any) are applied, and once no
/// call waits the turn's results go to the model.
pub(crate) async fn resume(
    settings: &Settings,
    owner: &Caller,
    id: &RunId,
    decisions: Vec<CallDecision>,
    options: &RunOptions,
) -> Result<Run, AgentError> {
    let mut run = take_own(settings, owner, id).await?;
    if let Err(error) = check_decisions(&run, &decisions) {
        settings.store.put(run).await.map_err(AgentError::Store)?;
        return Err(error);
    }
    if let Err(error) = settle_all(settings, &mut run, owner, &decisions).await {
        // What was decided so far stays decided; the run still waits.
        let run = refresh_pending(run);
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

/// Someone decides calls waiting in a run (through the registry, which checks it may); the
/// run waits for its owner to go on. A caller who may decide none of the run's waiting
/// calls is answered as if there were no such run.
pub(crate) async fn decide(
    settings: &Settings,
    who: &Caller,
    id: &RunId,
    decisions: Vec<CallDecision>,
) -> Result<Decided, AgentError> {
    if !id.storable() {
        return Err(AgentError::RunNotFound);
    }
    let run = settings.store.take(id).await.map_err(AgentError::Store)?;
    let mut run = run.ok_or(AgentError::RunNotFound)?;
    if let Err(error) = check_decider(settings, &run, who, &decisions) {
        settings.store.put(run).await.map_err(AgentError::Store)?;
        return Err(error);
    }
    let mut outcomes = Vec::new();
    let decided = decide_each(settings, &mut run, who, &decisions, &mut outcomes).await;
    // What was decided stays decided, also when a later decision was refused.
    let run = refresh_pending(run);
    let (run_id, still_waiting) = (run.id.clone(), run.pending().len());
    settings.store.put(run).await.map_err(AgentError::Store)?;
    decided.map(|()| Decided {
        run_id,
        outcomes,
        still_waiting,
    })
}

async fn decide_each(
    settings: &Settings,
    run: &mut Run,
    who: &Caller,
    decisions: &[CallDecision],
    outcomes: &mut Vec<ToolOutcome>,
) -> Result<(), AgentError> {
    for decision in decisions {
        if let Some(outcome) = apply(settings, run, who, decision).await? {
            outcomes.push(outcome);
        }
    }
    take_in_decided_elsewhere(settings, run).await
}

/// The run, if it is `caller`'s, taken out of the store to go on with the authority
/// `caller` presents now (its role may have changed since the run began).
pub(crate) async fn take_own(
    settings: &Settings,
    caller: &Caller,
    id: &RunId,
) -> Result<Run, AgentError> {
    if !id.storable() {
        return Err(AgentError::RunNotFound);
    }
    let run = settings.store.take(id).await.map_err(AgentError::Store)?;
    let mut run = run.ok_or(AgentError::RunNotFound)?;
    if run.caller.id() != caller.id() {
        settings.store.put(run).await.map_err(AgentError::Store)?;
        return Err(AgentError::RunNotFound);
    }
    run.caller = caller.clone();
    Ok(run)
}

/// Withdraws what the owner may no longer use, applies its decisions, and takes in what
/// was decided elsewhere.
async fn settle_all(
    settings: &Settings,
    run: &mut Run,
    owner: &Caller,
    decisions: &[CallDecision],
) -> Result<(), AgentError> {
    withdraw_unseen(settings, run, owner).await?;
    for decision in decisions {
        apply(settings, run, owner, decision).await?;
    }
    take_in_decided_elsewhere(settings, run).await
}

/// The run waits, and every decision names a waiting call.
fn check_decisions(run: &Run, decisions: &[CallDecision]) -> Result<(), AgentError> {
    if !run.status.waits() {
        let status = run.status.name();
        return Err(AgentError::NotWaiting { status });
    }
    for decision in decisions {
        if waiting_call(run, &decision.call_id).is_none() {
            let call_id =
                crate::util::bounded::clip(&decision.call_id, crate::util::bounded::MAX_QUOTED);
            return Err(AgentError::UnknownCall {
                call_id: call_id.into_owned(),
            });
        }
    }
    Ok(())
}

/// Someone other than the owner must bring decisions, and may decide at least one call
/// waiting in the run; else, to it, there is no such run.
fn check_decider(
    settings: &Settings,
    run: &Run,
    who: &Caller,
    decisions: &[CallDecision],
) -> Result<(), AgentError> {
    if run.caller.id() == who.id() {
        return check_decisions(run, decisions);
    }
    let involved = run.waiting.iter().any(|slot| {
        matches!(slot, Slot::Waiting(waiting) if settings.registry.may_decide(who, &waiting.tool))
    });
    if decisions.is_empty() || !involved {
        return Err(AgentError::RunNotFound);
    }
    check_decisions(run, decisions)
}

/// Calls waiting for tools the owner, as it presents now, may not see: they are withdrawn
/// (no approver can run them any more) and answered as unknown tools.
async fn withdraw_unseen(
    settings: &Settings,
    run: &mut Run,
    owner: &Caller,
) -> Result<(), AgentError> {
    let registry = &settings.registry;
    let unseen: Vec<PendingApproval> = run
        .waiting
        .iter()
        .filter_map(|slot| match slot {
            Slot::Waiting(waiting) if registry.definition(owner, &waiting.tool).is_none() => {
                Some(waiting.clone())
            }
            _ => None,
        })
        .collect();
    for waiting in unseen {
        let withdrawn = registry.withdraw(&waiting.ticket_id, owner).await;
        // Decided meanwhile: what was decided is taken in below.
        if let Some(outcome) = withdrawn.map_err(AgentError::Store)? {
            settle(settings, run, &waiting, outcome);
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
) -> Result<Option<ToolOutcome>, AgentError> {
    let Some(waiting) = waiting_call(run, &decision.call_id).cloned() else {
        // Two decisions about one call: the first one counts.
        return Ok(None);
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
    settle(settings, run, &waiting, outcome.clone());
    Ok(Some(outcome))
}

/// Calls decided through other routes (the approval API) since the run stopped, and calls
/// whose ticket expired undecided.
async fn take_in_decided_elsewhere(settings: &Settings, run: &mut Run) -> Result<(), AgentError> {
    let now = crate::util::time::now_secs();
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
/// A call that went on and waits again (a workflow at a later step) keeps its slot, now
/// waiting for the new ticket.
fn settle(settings: &Settings, run: &mut Run, waiting: &PendingApproval, outcome: ToolOutcome) {
    let slot = match driver::waiting_for_approval(&outcome, &waiting.arguments) {
        Some(again) => Slot::Waiting(again),
        None => Slot::Done(driver::record(
            settings,
            run,
            waiting.arguments.clone(),
            outcome,
        )),
    };
    for taken in &mut run.waiting {
        if matches!(taken, Slot::Waiting(w) if w.call_id == waiting.call_id) {
            *taken = slot;
            break;
        }
    }
}

/// The status lists the calls still waiting; with none left, the run waits for its owner.
fn refresh_pending(mut run: Run) -> Run {
    let pending = driver::waiting_calls(&run.waiting);
    run.status = if pending.is_empty() {
        RunStatus::Decided
    } else {
        RunStatus::NeedsApproval { pending }
    };
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
