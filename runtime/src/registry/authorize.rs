//! The authorize step: the application's call stages, then the policy. Most calls are
//! decided here, without waiting; a call that must be approved goes on in
//! [`approve`](super::approve).

use serde_json::{Value, json};

use crate::audit::redact;
use crate::error::{ErrorCode, ToolError};
use crate::events::EventKind;
use crate::policy::{Decision, PolicyRequest};
use crate::registry::checked_arguments::{Arguments, WhenAsked};
use crate::registry::contain::contained;
use crate::registry::record::Trail;
use crate::registry::record::Verdict;
use crate::registry::review::{failed_inside, review};
use crate::registry::run::Asking;
use crate::registry::stages::Staged;
use crate::tool::ToolResult;

/// What authorization allows.
pub(crate) enum Authorized {
    /// Run: with the arguments as called (`None`), or as an approver edited them.
    Run(Option<Value>),
    /// Dry run: what would have happened.
    DryRun(Value),
}

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
// Inlined: kept apart, it made calls without stages 49 instructions slower on the `search`
// bench row (register use around the call), and a call with one stage no faster.
#[inline]
fn authorize_staged(asking: &Asking<'_>, arguments: Arguments<'_>, dry_run: bool) -> Authorization {
    let stages = &asking.config.governance.stages;
    let entry = asking.entry;
    let origin = (asking.front, asking.run_id);
    let staged = stages.check_call(asking.caller, entry, (asking.call_id, origin), arguments);
    let (rewritten, approval, notes) = match staged {
        Staged::Untouched => return by_policy(asking, arguments, dry_run),
        Staged::Refused { error, notes } => {
            let verdict = Verdict::new(if dry_run {
                "dry_run"
            } else {
                "refused_by_stage"
            });
            let result = match dry_run {
                true => {
                    let refused = Decision::Deny {
                        reason: error.message,
                    };
                    Ok(Authorized::DryRun(dry_run_report(&refused)))
                }
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
        // A dry run the policy allows reports the stage's demand; one it refuses stays so.
        (Authorization::Decided(verdict, Ok(Authorized::DryRun(report))), Some(reason))
            if report["decision"] == "allow" =>
        {
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

/// The policy's decision (see [`authorize`]).
#[inline]
fn by_policy(asking: &Asking<'_>, arguments: Arguments<'_>, dry_run: bool) -> Authorization {
    let governance = &asking.config.governance;
    let entry = asking.entry;
    let shown = WhenAsked::new(entry, arguments);
    let request = PolicyRequest::lazy(&entry.definition, asking.caller, &shown);
    let tool = &asking.entry.definition.name;
    let Some(decision) = contained("the policy", tool, || governance.policy.decide(&request))
    else {
        let error = failed_inside("the policy that decides whether it may run failed");
        return Authorization::Decided(Verdict::new("not_reached"), Err(error));
    };
    if dry_run {
        return dry_run_of(asking, &arguments.value(entry), &decision);
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

/// A dry run's answer: the decision, and what the tool says the call would do (its review,
/// e.g. a workflow's steps). A call its tool would refuse before anyone is asked is
/// reported as refused.
#[inline(never)]
fn dry_run_of(asking: &Asking<'_>, arguments: &Value, decision: &Decision) -> Authorization {
    let reviewed = match decision {
        Decision::Deny { .. } => Ok(None),
        _ => review(asking, arguments),
    };
    let mut report = dry_run_report(decision);
    match (decision, reviewed) {
        (Decision::RequireApproval { .. }, Err(error)) => {
            return Authorization::Decided(Verdict::new("dry_run"), Err(error));
        }
        (_, Ok(None) | Err(_)) => {}
        (_, Ok(Some(review))) => report["review"] = review,
    }
    Authorization::Decided(Verdict::new("dry_run"), Ok(Authorized::DryRun(report)))
}

fn dry_run_report(decision: &Decision) -> Value {
    let (decision, reason) = match decision {
        Decision::Allow => ("allow", None),
        Decision::RequireApproval { reason } => ("require_approval", Some(reason)),
        Decision::Deny { reason } => ("deny", Some(reason)),
    };
    json!({"dry_run": true, "decision": decision, "reason": reason})
}

/// Notes the decision in the trail; what the call runs with (the arguments as called, or
/// as an approver edited them), or its result if it ends here.
pub(crate) fn authorized(
    trail: &mut Trail<'_>,
    (verdict, authorized): (Verdict, Result<Authorized, ToolError>),
) -> Result<Option<Value>, ToolResult> {
    trail.note(verdict);
    match authorized {
        Ok(Authorized::Run(edited)) => Ok(edited),
        Ok(Authorized::DryRun(report)) => Err(Ok(report)),
        Err(error) => Err(Err(error)),
    }
}
