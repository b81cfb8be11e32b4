//! Calls that wait with a signed ticket: kept in the pending store, redeemed later by an
//! approver whose role may decide them.

use serde_json::{Value, json};

use crate::approval::ticket::TicketClaims;
use crate::approval::{PendingCall, TicketError};
use crate::audit::redact;
use crate::caller::Caller;
use crate::error::{ErrorCode, ToolError};
use crate::events::EventKind;
use crate::paused::StepOf;
use crate::registry::Config;
use crate::registry::run::Asking;
use crate::registry::snapshot::Snapshot;
use crate::store_error::StoreError;

/// No one to ask now: keep the call, and answer with a ticket that redeems it later (or the
/// store's failure, if it cannot be kept).
pub(crate) async fn defer(
    asking: &Asking<'_>,
    arguments: Value,
    reason: String,
    review: Option<Value>,
) -> Result<ToolError, StoreError> {
    let (ticket, claims) = keep_waiting(asking, arguments, reason.clone(), review, false).await?;
    Ok(ToolError::new(
        ErrorCode::ApprovalRequired,
        format!("this call needs a person's approval ({reason}); it has not run. Tell the user it is waiting for approval"),
    )
    .with_details(json!({"ticket": ticket, "ticket_id": claims.id, "expires": claims.expires, "reason": reason})))
}

/// Keeps a call waiting under a new ticket: for an approver, or for its own caller's
/// confirmation (then it is not announced to approvers).
pub(crate) async fn keep_waiting(
    asking: &Asking<'_>,
    arguments: Value,
    reason: String,
    review: Option<Value>,
    caller_confirms: bool,
) -> Result<(String, TicketClaims), StoreError> {
    let governance = &asking.config.governance;
    let tool = &asking.entry.definition.name;
    let (ticket, claims) =
        governance
            .signer
            .issue(asking.caller.id(), tool, asking.call_id, &arguments);
    let event = EventKind::ApprovalRequested {
        call_id: asking.call_id.to_owned(),
        tool: tool.clone(),
        arguments: redact(&arguments, &asking.entry.definition.secret_arguments),
        reason: reason.clone(),
        review: review.clone(),
        ticket: (!caller_confirms).then(|| ticket.clone()),
    };
    let waiting = PendingCall {
        ticket: ticket.clone(),
        ticket_id: claims.id.clone(),
        caller: asking.caller.clone(),
        call_id: asking.call_id.to_owned(),
        tool: tool.clone(),
        arguments,
        reason,
        requested: crate::util::time::now_secs(),
        expires: claims.expires,
        review,
        run_id: asking.run_id.map(str::to_owned),
        caller_confirms,
        kept: governance.stages.kept(tool),
        paused: asking.step_of.map(StepOf::paused),
    };
    governance.pending.put(waiting).await?;
    asking.report_approval(|| event);
    Ok((ticket, claims))
}

/// Checks a ticket and takes its pending call, exactly once, if `approver` may decide it.
/// A call the approver may not decide is left waiting and answered like an unknown one.
pub(crate) async fn redeem(
    config: &Config,
    snapshot: &Snapshot,
    ticket: &str,
    approver: &Caller,
) -> Result<PendingCall, TicketError> {
    let governance = &config.governance;
    let claims = claims_of(config, ticket).await?;
    let waiting = governance
        .pending
        .get(&claims.id)
        .await
        .map_err(ticket_store_failed)?
        .ok_or(TicketError::AlreadyUsed)?;
    // A call waiting for its own caller's confirmation is no approver's to decide.
    let asked = (&waiting.caller, &waiting.arguments);
    let decidable = !waiting.caller_confirms
        && snapshot
            .any(&waiting.tool)
            .is_some_and(|entry| governance.may_decide_call(config, approver, entry, asked));
    if !decidable {
        return Err(TicketError::AlreadyUsed);
    }
    let pending = governance
        .pending
        .take(&claims.id)
        .await
        .map_err(ticket_store_failed)?
        .ok_or(TicketError::AlreadyUsed)?;
    let matches = pending.caller.id() == claims.caller
        && pending.tool == claims.tool
        && pending.call_id == claims.call_id
        && governance.signer.arguments_digest(&pending.arguments) == claims.arguments;
    if matches {
        Ok(pending)
    } else {
        Err(TicketError::Mismatch)
    }
}

/// The claims of a signed ticket, or of the ticket of a waiting call named by its short id
/// (the `ticket_id` a listing shows): an id names no ticket once its call is decided.
async fn claims_of(config: &Config, ticket: &str) -> Result<TicketClaims, TicketError> {
    let signer = &config.governance.signer;
    let is_id =
        !ticket.is_empty() && ticket.len() <= 64 && ticket.bytes().all(|b| b.is_ascii_hexdigit());
    if !is_id {
        return signer.verify(ticket);
    }
    let pending = config.governance.pending.get(ticket).await;
    let waiting = pending.map_err(ticket_store_failed)?;
    signer.verify(&waiting.ok_or(TicketError::AlreadyUsed)?.ticket)
}

fn ticket_store_failed(error: StoreError) -> TicketError {
    tracing::error!(%error, "the pending-call store could not answer; nothing was decided");
    TicketError::StoreUnavailable
}

/// The pending calls `approver` may decide, secrets redacted.
pub(crate) async fn pending_for(
    config: &Config,
    snapshot: &Snapshot,
    approver: &Caller,
) -> Result<Vec<PendingCall>, StoreError> {
    let governance = &config.governance;
    let pending = governance.pending.list().await?;
    let decidable = pending
        .into_iter()
        .filter(|call| !call.caller_confirms)
        .filter_map(|mut call| {
            let entry = snapshot.any(&call.tool)?;
            let asked = (&call.caller, &call.arguments);
            if !governance.may_decide_call(config, approver, entry, asked) {
                return None;
            }
            call.arguments = redact(&call.arguments, &entry.definition.secret_arguments);
            Some(call)
        })
        .collect();
    Ok(decidable)
}
