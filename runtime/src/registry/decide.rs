//! Asking an approver while the call waits, and applying what it answered.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;

use crate::approval::{ApprovalAnswer, ApprovalRequest, Approver, Grant};
use crate::audit::{redact, unredacted};
use crate::error::{ErrorCode, ToolError};
use crate::events::EventKind;
use crate::registry::authorize::Authorized;
use crate::registry::contain::ContainedDrop;
use crate::registry::record::Verdict;
use crate::registry::run::Asking;

/// Asks `approver` while the call waits, and applies its answer.
pub(crate) async fn decide_now(
    asking: &Asking<'_>,
    approver_name: &str,
    approver: &dyn Approver,
    arguments: Value,
    reason: String,
    review: Option<Value>,
) -> (Verdict, Result<Authorized, ToolError>) {
    let tool = &asking.entry.definition.name;
    match ask(asking, approver_name, approver, &arguments, reason, review).await {
        Ok(answer) => {
            let (verdict, result) = apply_answer(asking, approver_name, answer, arguments).await;
            asking.report_approval(|| EventKind::ApprovalDecided {
                call_id: asking.call_id.to_owned(),
                tool: tool.clone(),
                decided_by: approver_name.to_owned(),
                decision: verdict.decision.to_owned(),
            });
            let result = result.map(|arguments| Authorized::Run(Some(arguments)));
            (verdict.by(approver_name), result)
        }
        Err(cancelled) => (
            Verdict::new("require_approval").by(approver_name),
            Err(cancelled),
        ),
    }
}

/// Asks the in-process approver, containing its failure; the caller's cancellation ends the
/// wait.
async fn ask(
    asking: &Asking<'_>,
    approver_name: &str,
    approver: &dyn Approver,
    arguments: &Value,
    reason: String,
    review: Option<Value>,
) -> Result<ApprovalAnswer, ToolError> {
    let tool = &asking.entry.definition;
    let request = approval_request(asking, arguments, reason, review);
    asking.report_approval(|| EventKind::ApprovalRequested {
        call_id: request.call_id.clone(),
        tool: tool.name.clone(),
        arguments: request.arguments.clone(),
        reason: request.reason.clone(),
        review: request.review.clone(),
        ticket: None,
    });
    // A failing approver is contained like a failing tool, also when it is dropped unfinished.
    let approval = ContainedDrop::new(
        &tool.name,
        AssertUnwindSafe(approver.approve(request)).catch_unwind(),
    );
    tokio::select! {
        answer = approval => Ok(answer.unwrap_or_else(|_| {
            tracing::error!(approver = %approver_name, tool = %tool.name, "the approver panicked; the call is refused");
            ApprovalAnswer::Deny { reason: "the approval could not be obtained (the approver failed)".into() }
        })),
        _ = asking.cancel.cancelled() => Err(ToolError::new(
            ErrorCode::Cancelled,
            "the call was cancelled while waiting for approval",
        )),
    }
}

/// What a person is shown about a call: the arguments with secrets redacted.
pub(crate) fn approval_request(
    asking: &Asking<'_>,
    arguments: &Value,
    reason: String,
    review: Option<Value>,
) -> ApprovalRequest {
    let tool = &asking.entry.definition;
    ApprovalRequest {
        tool: Arc::clone(tool),
        arguments: redact(arguments, &tool.secret_arguments),
        caller: asking.caller.clone(),
        call_id: asking.call_id.to_owned(),
        reason,
        review,
    }
}

/// Turns the approver's answer into the arguments to run with, or the refusal.
pub(crate) async fn apply_answer(
    asking: &Asking<'_>,
    approver_name: &str,
    answer: ApprovalAnswer,
    arguments: Value,
) -> (Verdict, Result<Value, ToolError>) {
    let tool = &asking.entry.definition;
    match answer {
        ApprovalAnswer::Approve => (Verdict::new("approved"), Ok(arguments)),
        ApprovalAnswer::ApproveAlways => {
            let grant = Grant {
                caller: asking.caller.id().to_owned(),
                tool: tool.name.clone(),
                granted_by: Some(approver_name.to_owned()),
                time_ms: crate::util::time::now_millis(),
            };
            // This call was approved either way; only the standing grant may be lost.
            if let Err(error) = asking.config.governance.grants.grant(grant).await {
                tracing::error!(%error, tool = %tool.name, "an \"always\" grant could not be kept; later calls will ask again");
            }
            (Verdict::new("approved_always"), Ok(arguments))
        }
        ApprovalAnswer::ApproveWithArguments(edited) => {
            let mut verdict = Verdict::new("approved_edited");
            let edited = unredacted(edited, &arguments, &tool.secret_arguments);
            let checked = asking.entry.check(edited).map_err(|error| {
                ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "the approver's edited arguments do not match the tool's input schema: {}",
                        error.message
                    ),
                )
                .with_details(error.details.unwrap_or(Value::Null))
            });
            if let Ok(edited) = &checked {
                verdict = verdict.edited(redact(edited, &tool.secret_arguments));
            }
            (verdict, checked)
        }
        ApprovalAnswer::Deny { reason } => (
            Verdict::new("approval_denied"),
            Err(refused_by_a_person(&reason)),
        ),
    }
}

pub(crate) fn refused_by_a_person(reason: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ApprovalDenied,
        format!("a person refused this call: {reason}"),
    )
}
