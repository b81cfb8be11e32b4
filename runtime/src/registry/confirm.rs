//! Approval by the person at the caller's own client ([`AskCaller`]): asked now, or asked by
//! the client, which makes the call again with the answer and the single-use ticket.

use serde_json::Value;

use crate::approval::{
    ApprovalAnswer, AskCaller, Confirmation, TicketError, confirmation_required,
};
use crate::error::{ErrorCode, ToolError};
use crate::events::EventKind;
use crate::input::InputRequired;
use crate::registry::authorize::Authorized;
use crate::registry::decide::{apply_answer, approval_request, decide_now};
use crate::registry::record::Verdict;
use crate::registry::run::Asking;
use crate::registry::tickets::keep_waiting;
use crate::store_error::unavailable;
use crate::tool::ToolResult;

/// Asks the caller's client, as `ask` says.
pub(crate) async fn by_caller(
    asking: &Asking<'_>,
    ask: &AskCaller,
    arguments: Value,
    reason: String,
    review: Option<Value>,
) -> (Verdict, Result<Authorized, ToolError>) {
    match ask {
        AskCaller::Now { name, approver } => {
            decide_now(asking, name, approver.as_ref(), arguments, reason, review).await
        }
        AskCaller::Later(None) => ask_later(asking, arguments, reason, review).await,
        AskCaller::Later(Some(confirmation)) => {
            answered(asking, confirmation, arguments, reason, review).await
        }
    }
}

/// Keeps the call waiting for its caller, and answers with the form to show them.
async fn ask_later(
    asking: &Asking<'_>,
    arguments: Value,
    reason: String,
    review: Option<Value>,
) -> (Verdict, Result<Authorized, ToolError>) {
    let request = approval_request(asking, &arguments, reason.clone(), review.clone());
    match keep_waiting(asking, arguments, reason, review, true).await {
        Ok((ticket, _)) => {
            let error = confirmation_required(&request, &ticket).into();
            (Verdict::new("pending_approval"), Err(error))
        }
        Err(error) => (Verdict::new("require_approval"), Err(unavailable(error))),
    }
}

/// The call made again with its caller's answer: checked against the ticket (this caller,
/// this tool, these arguments, not expired), taken once, then run or refused.
async fn answered(
    asking: &Asking<'_>,
    confirmation: &Confirmation,
    arguments: Value,
    reason: String,
    review: Option<Value>,
) -> (Verdict, Result<Authorized, ToolError>) {
    let governance = &asking.config.governance;
    let refused =
        |error: TicketError| (Verdict::new("require_approval"), Err(not_confirmed(error)));
    let claims = match governance.signer.verify(&confirmation.ticket) {
        Ok(claims) => claims,
        Err(error) => return refused(error),
    };
    let same_call = claims.caller == asking.caller.id()
        && claims.tool == asking.entry.definition.name
        && claims.arguments == governance.signer.arguments_digest(&arguments);
    if !same_call {
        return refused(TicketError::Mismatch);
    }
    let Some(answer) = &confirmation.answer else {
        // No answer yet: the same form again, for the same ticket.
        let request = approval_request(asking, &arguments, reason, review);
        let error = confirmation_required(&request, &confirmation.ticket).into();
        return (Verdict::new("pending_approval"), Err(error));
    };
    match governance.pending.take(&claims.id).await {
        Ok(Some(waiting)) if waiting.caller_confirms => {}
        Ok(_) => return refused(TicketError::AlreadyUsed),
        Err(error) => return (Verdict::new("require_approval"), Err(unavailable(error))),
    }
    let who = asking.caller.id();
    let answer = match answer {
        // The form offers yes or no; anything more is not the caller's to give.
        ApprovalAnswer::Deny { .. } => answer.clone(),
        _ => ApprovalAnswer::Approve,
    };
    let (verdict, result) = apply_answer(asking, who, answer, arguments).await;
    asking.report_approval(|| EventKind::ApprovalDecided {
        call_id: asking.call_id.to_owned(),
        tool: asking.entry.definition.name.clone(),
        decided_by: who.to_owned(),
        decision: verdict.decision.to_owned(),
    });
    let result = result.map(|arguments| Authorized::Run(Some(arguments)));
    (verdict.by(who), result)
}

fn not_confirmed(error: TicketError) -> ToolError {
    ToolError::new(
        ErrorCode::ApprovalDenied,
        format!("the confirmation was not accepted, so the call did not run: {error}"),
    )
}

/// Whether the call just approved was approved by its caller through a client that makes
/// calls again ([`AskCaller::Later`]).
pub(crate) fn approved_later(asking: &Asking<'_>, decision: &str) -> bool {
    decision == "approved" && matches!(asking.ask_caller, Some(AskCaller::Later(Some(_))))
}

/// The tool of a call its caller approved asks questions: the next round needs no new
/// approval, so the questions carry a new single-use ticket for it.
pub(crate) async fn carry_approval(
    asking: &Asking<'_>,
    arguments: Value,
    result: ToolResult,
) -> ToolResult {
    let Err(error) = &result else {
        return result;
    };
    let Some(mut asked) = InputRequired::from_error(error) else {
        return result;
    };
    let reason = "approved by the caller; continues with the answers to its questions".to_owned();
    match keep_waiting(asking, arguments, reason, None, true).await {
        Ok((ticket, _)) => {
            asked.ticket = Some(ticket);
            Err(asked.into())
        }
        Err(error) => Err(unavailable(error)),
    }
}
