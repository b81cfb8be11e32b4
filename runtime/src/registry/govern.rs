//! Whether a call may run: rate limits, the policy, and approval (in process, or by a
//! signed ticket redeemed later).

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use futures::FutureExt;
use serde_json::{Value, json};

use crate::approval::{
    ApprovalAnswer, ApprovalRequest, Approver, PendingCall, PendingStore, TicketError,
    TicketSigner, arguments_hash,
};
use crate::audit::{AuditSink, History};
use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::error::{ErrorCode, ToolError};
use crate::limits::RateLimits;
use crate::policy::{Decision, Policy, PolicyRequest};
use crate::registry::execute::{Trail, check_arguments};
use crate::registry::snapshot::Entry;

/// The registry's rules for deciding and recording calls.
pub(crate) struct Governance {
    pub(crate) policy: Box<dyn Policy>,
    pub(crate) approver: Option<(String, Box<dyn Approver>)>,
    pub(crate) pending: Arc<dyn PendingStore>,
    pub(crate) signer: TicketSigner,
    pub(crate) limits: RateLimits,
    pub(crate) max_batch: Option<usize>,
    pub(crate) sinks: Vec<Arc<dyn AuditSink>>,
    pub(crate) history: Arc<History>,
    /// (caller id, tool) pairs approved "always".
    pub(crate) always: Mutex<HashSet<(String, String)>>,
}

impl Governance {
    /// Whether records are kept anywhere (if not, none is built).
    pub(crate) fn audits(&self) -> bool {
        !self.sinks.is_empty() || self.history.keeps_any()
    }
}

/// What authorization allows.
pub(crate) enum Authorized {
    /// Run with these arguments.
    Run(Value),
    /// Dry run: what would have happened.
    DryRun(Value),
}

/// Applies the policy and, where it asks, approval. Fills in the trail's decision.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn authorize(
    governance: &Governance,
    entry: &Arc<Entry>,
    caller: &Caller,
    call_id: &str,
    arguments: Value,
    cancel: &CancellationToken,
    dry_run: bool,
    trail: &mut Trail,
) -> Result<Authorized, ToolError> {
    let tool = &entry.definition;
    let decision = governance.policy.decide(&PolicyRequest {
        tool,
        caller,
        arguments: &arguments,
    });
    if dry_run {
        trail.decision = "dry_run";
        let (decision, reason) = match &decision {
            Decision::Allow => ("allow", None),
            Decision::RequireApproval { reason } => ("require_approval", Some(reason)),
            Decision::Deny { reason } => ("deny", Some(reason)),
        };
        return Ok(Authorized::DryRun(
            json!({"dry_run": true, "decision": decision, "reason": reason}),
        ));
    }
    let reason = match decision {
        Decision::Allow => {
            trail.decision = "allow";
            return Ok(Authorized::Run(arguments));
        }
        Decision::Deny { reason } => {
            trail.decision = "deny";
            return Err(ToolError::new(
                ErrorCode::Denied,
                format!("this call is not allowed: {reason}"),
            ));
        }
        Decision::RequireApproval { reason } => reason,
    };
    let key = (caller.id().to_owned(), tool.name.clone());
    if governance
        .always
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(&key)
    {
        trail.decision = "approved_always";
        return Ok(Authorized::Run(arguments));
    }
    let Some((approver_name, approver)) = &governance.approver else {
        return Err(defer(
            governance, caller, call_id, &tool.name, arguments, reason, trail,
        ));
    };
    let request = ApprovalRequest {
        tool: Arc::clone(tool),
        arguments: arguments.clone(),
        caller: caller.clone(),
        call_id: call_id.to_owned(),
        reason,
    };
    // A failing approver is contained like a failing tool: the call is refused, not lost.
    let approval = AssertUnwindSafe(approver.approve(request)).catch_unwind();
    let answer = tokio::select! {
        answer = approval => answer.unwrap_or_else(|_| {
            tracing::error!(approver = %approver_name, tool = %tool.name, "the approver panicked; the call is refused");
            ApprovalAnswer::Deny { reason: "the approval could not be obtained (the approver failed)".into() }
        }),
        _ = cancel.cancelled() => {
            trail.decision = "require_approval";
            return Err(ToolError::new(ErrorCode::Cancelled, "the call was cancelled while waiting for approval"));
        }
    };
    trail.approver = Some(approver_name.clone());
    match answer {
        ApprovalAnswer::Approve => {
            trail.decision = "approved";
            Ok(Authorized::Run(arguments))
        }
        ApprovalAnswer::ApproveAlways => {
            trail.decision = "approved_always";
            governance
                .always
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key);
            Ok(Authorized::Run(arguments))
        }
        ApprovalAnswer::ApproveWithArguments(edited) => {
            trail.decision = "approved_edited";
            let edited = check_arguments(entry, edited).map_err(|error| {
                ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "the approver's edited arguments do not match the tool's input schema: {}",
                        error.message
                    ),
                )
                .with_details(error.details.unwrap_or(Value::Null))
            })?;
            trail.arguments = crate::audit::redact(&edited, &tool.secret_arguments);
            Ok(Authorized::Run(edited))
        }
        ApprovalAnswer::Deny { reason } => {
            trail.decision = "approval_denied";
            Err(ToolError::new(
                ErrorCode::ApprovalDenied,
                format!("a person refused this call: {reason}"),
            ))
        }
    }
}

/// No one to ask now: keep the call, and answer with a ticket that redeems it later.
fn defer(
    governance: &Governance,
    caller: &Caller,
    call_id: &str,
    tool: &str,
    arguments: Value,
    reason: String,
    trail: &mut Trail,
) -> ToolError {
    trail.decision = "pending_approval";
    let (ticket, claims) = governance
        .signer
        .issue(caller.id(), tool, call_id, &arguments);
    governance.pending.put(PendingCall {
        ticket: ticket.clone(),
        ticket_id: claims.id,
        caller: caller.clone(),
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        arguments,
        reason: reason.clone(),
        expires: claims.expires,
    });
    ToolError::new(
        ErrorCode::ApprovalRequired,
        format!("this call needs a person's approval ({reason}); it has not run. Tell the user it is waiting for approval"),
    )
    .with_details(json!({"ticket": ticket, "expires": claims.expires, "reason": reason}))
}

/// Checks a ticket and takes its pending call, exactly once.
pub(crate) fn redeem(governance: &Governance, ticket: &str) -> Result<PendingCall, TicketError> {
    let claims = governance.signer.verify(ticket)?;
    let pending = governance
        .pending
        .take(&claims.id)
        .ok_or(TicketError::AlreadyUsed)?;
    let matches = pending.caller.id() == claims.caller
        && pending.tool == claims.tool
        && pending.call_id == claims.call_id
        && arguments_hash(&pending.arguments) == claims.arguments;
    if matches {
        Ok(pending)
    } else {
        Err(TicketError::Mismatch)
    }
}
