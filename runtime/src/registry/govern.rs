//! Whether a call may run: the policy, and approval (in process, or by a signed ticket
//! redeemed later by an approver whose role may decide it).

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, LazyLock};

use futures::FutureExt;
use serde_json::{Map, Value, json};

use crate::approval::ticket::TicketClaims;
use crate::approval::{
    ApprovalAnswer, ApprovalRequest, Approver, AskCaller, Grant, PendingCall, TicketError,
};
use crate::audit::{REDACTED, redact};
use crate::caller::Caller;
use crate::context::{CallId, ToolContext};
use crate::error::{ErrorCode, ToolError};
use crate::events::EventKind;
use crate::policy::{Decision, PolicyRequest};
use crate::registry::Config;
use crate::registry::cancel::Cancel;
use crate::registry::checked::Arguments;
use crate::registry::confirm;
use crate::registry::contain::{ContainedDrop, contained};
use crate::registry::record::Verdict;
use crate::registry::snapshot::{Entry, Snapshot};
use crate::registry::stages::Staged;
use crate::store::StoreError;
use crate::store::error::unavailable;

/// One call on its way to a decision.
pub(crate) struct Asking<'a> {
    pub(crate) config: &'a Config,
    pub(crate) entry: &'a Arc<Entry>,
    pub(crate) caller: &'a Caller,
    pub(crate) call_id: &'a str,
    pub(crate) cancel: Cancel<'a>,
    /// The agent run the call belongs to, for its events.
    pub(crate) run_id: Option<&'a str>,
    /// How to ask the caller's own client, where the caller may decide the call.
    pub(crate) ask_caller: Option<&'a AskCaller>,
}

impl Asking<'_> {
    /// Reports an event about this call.
    pub(crate) fn report(&self, kind: impl FnOnce() -> EventKind) {
        let governance = &self.config.governance;
        governance.events.publish(|| {
            let run = self.run_id.map(str::to_owned);
            (self.caller.id().to_owned(), run, kind())
        });
    }
}

/// What authorization allows.
pub(crate) enum Authorized {
    /// Run: with the arguments as called (`None`), or as an approver edited them.
    Run(Option<Value>),
    /// Dry run: what would have happened.
    DryRun(Value),
}

/// What a policy that does not read a call's arguments is given for them: made once, not
/// per call.
static UNREAD: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));

/// What the policy decided about a call.
pub(crate) enum Authorization {
    /// Decided without asking anyone: what may run (or why not), and the verdict for the
    /// call's record.
    Decided(Verdict, Result<Authorized, ToolError>),
    /// The call must be approved first, for this reason ([`require_approval`]); what the
    /// application's stages did to it, if any did anything.
    Approval(String, Option<Box<Staging>>),
}

/// Applies the policy. Not async: most calls are decided here, and only a call that must be
/// approved waits (in [`require_approval`], which its caller boxes). Inlined: what it
/// decides is read at once where it is asked.
#[inline]
pub(crate) fn authorize(
    asking: &Asking<'_>,
    arguments: Arguments<'_>,
    dry_run: bool,
) -> Authorization {
    if asking.config.governance.stages.checks_calls() {
        return authorize_staged(asking, arguments, dry_run);
    }
    by_policy(asking, arguments, dry_run)
}

/// [`authorize`] where the application's call stages come first: a stage's refusal ends
/// the call; what the stages let through (as they rewrote it) goes to the policy, and a
/// stage's demand for approval stands whatever the policy allows.
#[inline(never)]
fn authorize_staged(asking: &Asking<'_>, arguments: Arguments<'_>, dry_run: bool) -> Authorization {
    let stages = &asking.config.governance.stages;
    let entry = asking.entry;
    let shown = match stages.read_arguments() {
        true => arguments.value(entry),
        false => Cow::Borrowed(&*UNREAD),
    };
    let staged = stages.check_call(asking.caller, entry, asking.call_id, &shown);
    let (rewritten, approval, notes) = match staged {
        Staged::Refused { error, notes } => {
            let verdict = Verdict::new(if dry_run {
                "dry_run"
            } else {
                "refused_by_stage"
            });
            let result = match dry_run {
                true => Ok(Authorized::DryRun(refused_report(&error))),
                false => Err(error),
            };
            return Authorization::Decided(verdict.staged(notes), result);
        }
        Staged::Passed {
            rewritten,
            approval,
            notes,
        } => (rewritten, approval, notes),
    };
    let seen = rewritten.as_ref().map_or(arguments, Arguments::Value);
    let by_policy = by_policy(asking, seen, dry_run);
    match (by_policy, approval) {
        (Authorization::Decided(verdict, Ok(Authorized::Run(None))), None) => {
            let verdict = verdict.staged(notes).rewritten(rewritten.as_ref(), entry);
            Authorization::Decided(verdict, Ok(Authorized::Run(rewritten)))
        }
        (Authorization::Decided(verdict, Ok(Authorized::DryRun(_))), Some(reason)) => {
            let report = dry_run_report(&Decision::RequireApproval { reason });
            Authorization::Decided(verdict.staged(notes), Ok(Authorized::DryRun(report)))
        }
        (Authorization::Decided(verdict, result @ (Err(_) | Ok(Authorized::DryRun(_)))), _) => {
            Authorization::Decided(verdict.staged(notes), result)
        }
        (Authorization::Decided(_, Ok(Authorized::Run(_))), Some(reason))
        | (Authorization::Approval(reason, _), Some(_) | None) => {
            Authorization::Approval(reason, Box::new(Staging { rewritten, notes }).into())
        }
        (Authorization::Decided(verdict, Ok(Authorized::Run(Some(edited)))), None) => {
            // Only call stages rewrite before a decision; a policy never edits.
            Authorization::Decided(verdict.staged(notes), Ok(Authorized::Run(Some(edited))))
        }
    }
}

/// What the stages did to a call that now waits for approval: the arguments it runs with
/// once approved (as a stage rewrote them), and the notes for its record.
pub(crate) struct Staging {
    pub(crate) rewritten: Option<Value>,
    pub(crate) notes: Option<Box<str>>,
}

/// The dry run's report of a call a stage refused.
fn refused_report(error: &ToolError) -> Value {
    json!({"dry_run": true, "decision": "deny", "reason": error.message})
}

/// The policy's decision (see [`authorize`]).
#[inline]
fn by_policy(asking: &Asking<'_>, arguments: Arguments<'_>, dry_run: bool) -> Authorization {
    let governance = &asking.config.governance;
    let entry = asking.entry;
    let request = PolicyRequest {
        tool: &entry.definition,
        caller: asking.caller,
        arguments: match arguments {
            Arguments::Value(value) => value,
            // Read straight from text: only for a policy that does not read them.
            Arguments::Text(_) => &UNREAD,
        },
    };
    let tool = &asking.entry.definition.name;
    let Some(decision) = contained("the policy", tool, || governance.policy.decide(&request))
    else {
        let error = failed_inside("the policy that decides whether it may run failed");
        return Authorization::Decided(Verdict::new("not_reached"), Err(error));
    };
    if dry_run {
        // A call its tool would refuse before asking anyone is reported as refused.
        if let Decision::RequireApproval { .. } = &decision
            && let Err(error) = review(asking, &arguments.value(entry))
        {
            return Authorization::Decided(Verdict::new("dry_run"), Err(error));
        }
        let report = Authorized::DryRun(dry_run_report(&decision));
        return Authorization::Decided(Verdict::new("dry_run"), Ok(report));
    }
    asking.report(|| EventKind::CallRequested {
        call_id: asking.call_id.to_owned(),
        tool: tool.clone(),
        arguments: redact(&arguments.value(entry), &entry.definition.secret_arguments),
        needs_approval: matches!(decision, Decision::RequireApproval { .. }),
    });
    match decision {
        Decision::Allow => Authorization::Decided(Verdict::new("allow"), Ok(Authorized::Run(None))),
        Decision::Deny { reason } => {
            let error = ToolError::new(
                ErrorCode::Denied,
                format!("this call is not allowed: {reason}"),
            );
            Authorization::Decided(Verdict::new("deny"), Err(error))
        }
        Decision::RequireApproval { reason } => Authorization::Approval(reason, None),
    }
}

/// A call the policy wants approved: a standing grant, the tool's review, then whoever may
/// decide it (an in-process approver, the caller's client, or an approver with a ticket).
pub(crate) async fn require_approval(
    asking: &Asking<'_>,
    arguments: &Value,
    reason: String,
    staging: Option<Box<Staging>>,
) -> (Verdict, Result<Authorized, ToolError>) {
    let Some(staging) = staging else {
        return seek_approval(asking, arguments, reason).await;
    };
    let Staging { rewritten, notes } = *staging;
    let arguments = rewritten.as_ref().unwrap_or(arguments);
    let (verdict, result) = seek_approval(asking, arguments, reason).await;
    let verdict = verdict
        .staged(notes)
        .rewritten(rewritten.as_ref(), asking.entry);
    match (result, rewritten) {
        // Approved as asked: as the stages rewrote it.
        (Ok(Authorized::Run(None)), Some(rewritten)) => {
            (verdict, Ok(Authorized::Run(Some(rewritten))))
        }
        (result, _) => (verdict, result),
    }
}

/// [`require_approval`] of the call's arguments as they are.
async fn seek_approval(
    asking: &Asking<'_>,
    arguments: &Value,
    reason: String,
) -> (Verdict, Result<Authorized, ToolError>) {
    let governance = &asking.config.governance;
    let tool = &asking.entry.definition.name;
    match governance.grants.granted(asking.caller.id(), tool).await {
        Ok(true) => {
            let verdict = Verdict::new("approved_always");
            return (verdict, Ok(Authorized::Run(None)));
        }
        Ok(false) => {}
        Err(error) => return (Verdict::new("require_approval"), Err(unavailable(error))),
    }
    // The tool looks first: a call it would refuse is refused before a person is bothered.
    let review = match review(asking, arguments) {
        Ok(review) => review,
        Err(error) => return (Verdict::new("review_refused"), Err(error)),
    };
    // Asking someone keeps (or may edit) the arguments: the slow path has its own copy.
    let arguments = arguments.clone();
    if let Some((approver_name, approver)) = &governance.approver {
        let approver = approver.as_ref();
        return decide_now(asking, approver_name, approver, arguments, reason, review).await;
    }
    if let Some(ask_caller) = asking.ask_caller
        && governance.may_decide(asking.config, asking.caller, asking.entry)
    {
        return confirm::by_caller(asking, ask_caller, arguments, reason, review).await;
    }
    match defer(asking, arguments, reason, review).await {
        Ok(waiting) => (Verdict::new("pending_approval"), Err(waiting)),
        Err(error) => (Verdict::new("require_approval"), Err(unavailable(error))),
    }
}

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
            asking.report(|| EventKind::ApprovalDecided {
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

fn dry_run_report(decision: &Decision) -> Value {
    let (decision, reason) = match decision {
        Decision::Allow => ("allow", None),
        Decision::RequireApproval { reason } => ("require_approval", Some(reason)),
        Decision::Deny { reason } => ("deny", Some(reason)),
    };
    json!({"dry_run": true, "decision": decision, "reason": reason})
}

fn review(asking: &Asking<'_>, arguments: &Value) -> Result<Option<Value>, ToolError> {
    let context = ToolContext {
        states: Arc::clone(&asking.config.states),
        caller: asking.caller.clone(),
        call_id: CallId(asking.call_id.into()),
        cancel: asking.cancel.child(),
        // A review looks at the call before it runs: nothing to report yet.
        progress: None,
        log: None,
        input: None,
    };
    let tool = &asking.entry.definition.name;
    contained("the tool's review", tool, || {
        asking.entry.handler.review(&context, arguments)
    })
    .unwrap_or_else(|| Err(failed_inside("the tool's review of the call failed")))
}

/// Application code on the call's path panicked: the call is refused, not lost.
fn failed_inside(what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Panicked,
        format!(
            "{what} (an internal error, not a problem with your arguments); the call did not run"
        ),
    )
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
    asking.report(|| EventKind::ApprovalRequested {
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
                time_ms: crate::time::now_millis(),
            };
            // This call was approved either way; only the standing grant may be lost.
            if let Err(error) = asking.config.governance.grants.grant(grant).await {
                tracing::error!(%error, tool = %tool.name, "an \"always\" grant could not be kept; later calls will ask again");
            }
            (Verdict::new("approved_always"), Ok(arguments))
        }
        ApprovalAnswer::ApproveWithArguments(edited) => {
            let mut verdict = Verdict::new("approved_edited");
            let edited = keep_redacted_secrets(edited, &arguments, &tool.secret_arguments);
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
                verdict.edited_arguments = Some(redact(edited, &tool.secret_arguments));
            }
            (verdict, checked)
        }
        ApprovalAnswer::Deny { reason } => (
            Verdict::new("approval_denied"),
            Err(refused_by_a_person(&reason)),
        ),
    }
}

/// The approver saw secrets as `"[redacted]"`; where it left them so, the real values stay.
fn keep_redacted_secrets(mut edited: Value, original: &Value, secrets: &[String]) -> Value {
    if let Value::Object(map) = &mut edited {
        for secret in secrets {
            let untouched = map.get(secret).and_then(Value::as_str) == Some(REDACTED);
            if let (true, Some(real)) = (untouched, original.get(secret)) {
                map.insert(secret.clone(), real.clone());
            }
        }
    }
    edited
}

pub(crate) fn refused_by_a_person(reason: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ApprovalDenied,
        format!("a person refused this call: {reason}"),
    )
}

/// No one to ask now: keep the call, and answer with a ticket that redeems it later (or the
/// store's failure, if it cannot be kept).
async fn defer(
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
        requested: crate::time::now_secs(),
        expires: claims.expires,
        review,
        run_id: asking.run_id.map(str::to_owned),
        caller_confirms,
    };
    governance.pending.put(waiting).await?;
    asking.report(|| event);
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
    let claims = governance.signer.verify(ticket)?;
    let waiting = governance
        .pending
        .get(&claims.id)
        .await
        .map_err(ticket_store_failed)?
        .ok_or(TicketError::AlreadyUsed)?;
    // A call waiting for its own caller's confirmation is no approver's to decide.
    let decidable = !waiting.caller_confirms
        && snapshot
            .any(&waiting.tool)
            .is_some_and(|entry| governance.may_decide(config, approver, entry));
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
            if !governance.may_decide(config, approver, entry) {
                return None;
            }
            call.arguments = redact(&call.arguments, &entry.definition.secret_arguments);
            Some(call)
        })
        .collect();
    Ok(decidable)
}
