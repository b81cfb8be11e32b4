//! A call that waited with a ticket, taken up again after a person decided: approved, it runs
//! as its original caller (checked again, since the tool may have changed); denied, its
//! outcome carries the reason. Both end in one audited outcome.

use serde_json::Value;
use smol_str::SmolStr;

use crate::approval::{DecidedCall, PendingCall};
use crate::audit::{CallArguments, redact};
use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::events::EventKind;
use crate::front::FrontEnd;
use crate::registry::Config;
use crate::registry::calling::unwrapped;
use crate::registry::cancel::Cancel;
use crate::registry::decide::refused_by_a_person;
use crate::registry::find::unseen;
use crate::registry::go_on::go_on;
use crate::registry::path::Approved;
use crate::registry::record::{Trail, finish, reject};
use crate::registry::run::Run;
use crate::registry::snapshot::Snapshot;
use crate::stage::{ResumedCall, WrappedCall};

/// How long after its ticket expires a decided call's outcome is kept for its agent run.
const KEEP_DECIDED_SECS: u64 = 24 * 60 * 60;

/// What was decided about a waiting call.
pub(crate) enum Resolution<'a> {
    Approve,
    Deny {
        reason: &'a str,
    },
    /// Its caller, presenting now with less authority, may no longer use the tool.
    Withdraw,
}

/// Takes up `pending` as `approver` decided it, inside the application's wrappers if it
/// has any (the rest of the call is wrapped as its beginning was).
pub(crate) async fn resume(
    config: &Config,
    snapshot: &Snapshot,
    mut pending: PendingCall,
    approver: &Caller,
    resolution: Resolution<'_>,
) -> ToolOutcome {
    let stages = &config.governance.stages;
    if !stages.wrap_calls() {
        return resolve(config, snapshot, pending, approver, resolution).await;
    }
    let caller = pending.caller.clone();
    let (id, name) = (
        SmolStr::from(&pending.call_id),
        SmolStr::from(&pending.tool),
    );
    let (kept, run_id) = (std::mem::take(&mut pending.kept), pending.run_id.clone());
    let seen = WrappedCall {
        caller: &caller,
        tool: &name,
        call_id: &id,
        front: FrontEnd::Library,
        run_id: run_id.as_deref(),
        resumed: Some(ResumedCall {
            requested: pending.requested,
            decided_by: approver.id(),
            kept: &kept,
        }),
    };
    let inner = Box::pin(resolve(config, snapshot, pending, approver, resolution));
    match stages.wrapped(&seen, inner) {
        Ok(wrapped) => wrapped.await,
        Err(error) => {
            // The call never began again: its refusal is recorded like any other.
            let call = ToolCall::new(id, name, Value::Object(Default::default()));
            reject(config, &caller, call, error).await
        }
    }
}

/// [`resume`], unwrapped.
async fn resolve(
    config: &Config,
    snapshot: &Snapshot,
    pending: PendingCall,
    decider: &Caller,
    resolution: Resolution<'_>,
) -> ToolOutcome {
    let started = crate::util::time::now();
    let PendingCall {
        ticket_id,
        expires,
        caller,
        call_id,
        tool,
        arguments,
        run_id,
        paused,
        ..
    } = pending;
    let decided = |decision: &str| {
        config.governance.events.publish_approval(|| {
            let kind = EventKind::ApprovalDecided {
                call_id: call_id.clone(),
                tool: tool.clone(),
                decided_by: decider.id().to_owned(),
                decision: decision.to_owned(),
            };
            (caller.id().to_owned(), run_id.clone(), kind)
        });
    };
    let refusal = match resolution {
        Resolution::Approve => None,
        Resolution::Deny { reason } => {
            let approver = Some(decider.id().to_owned());
            Some(("approval_denied", approver, refused_by_a_person(reason)))
        }
        Resolution::Withdraw => {
            // The caller itself, as it presents now, no longer sees the tool.
            let rank = config.roles.rank(decider.role());
            let error = unseen(config, snapshot, (rank, decider), &tool);
            Some(("withdrawn", None, error))
        }
    };
    let outcome = match refusal {
        None => {
            decided("approved");
            let call = ToolCall::new(call_id.as_str(), tool.as_str(), arguments);
            run_approved(config, snapshot, (&caller, call), decider, &run_id).await
        }
        Some((decision, approver, error)) => {
            decided(decision);
            let mut trail = Trail {
                decision,
                approver,
                arguments: redacted(snapshot, &tool, &arguments),
                ..Trail::of(run_id.as_deref())
            };
            let (call_id, tool) = (call_id.into(), tool.into());
            let refused = finish(
                config,
                &caller,
                call_id,
                tool,
                Err(error),
                started,
                &mut trail,
            );
            refused.written().await
        }
    };
    // A step of a workflow's call: the workflow goes on with it, and its outcome is the
    // one the decider and the agent run get.
    let who = (&caller, decider);
    let outcome = go_on(config, snapshot, who, paused, outcome, run_id.as_deref()).await;
    if run_id.is_some() {
        keep_for_its_run(config, &ticket_id, expires, &outcome).await;
    }
    outcome
}

/// An approved call runs as the caller who made it, down the path every call walks, from
/// its decision on: found and read again (the tool may have changed since), recorded
/// before it runs where that is asked, run, its result checked, recorded.
async fn run_approved(
    config: &Config,
    snapshot: &Snapshot,
    (caller, call): (&Caller, ToolCall),
    approver: &Caller,
    run_id: &Option<String>,
) -> ToolOutcome {
    let run = Run {
        config,
        rank: config.roles.rank(caller.role()),
        caller,
        cancel: Cancel(None),
        dry_run: false,
        run_id: run_id.as_deref(),
        // Decided already: no rule reads where it came in any more.
        front: crate::FrontEnd::Library,
        // Nobody asked: the caller who made the call is not waiting on it.
        client: None,
    };
    // Inside no wrapper here: `resume` wrapped the whole of it.
    let approved = Approved(approver.id());
    unwrapped(&run, snapshot, call, approved).await
}

fn redacted(snapshot: &Snapshot, tool: &str, arguments: &Value) -> CallArguments<'static> {
    let secrets = snapshot
        .any(tool)
        .map(|entry| entry.definition.secret_arguments.as_slice())
        .unwrap_or_default();
    CallArguments::Value(redact(arguments, secrets))
}

/// An agent run goes on with this outcome, whoever decided and through which route.
async fn keep_for_its_run(config: &Config, ticket_id: &str, expires: u64, outcome: &ToolOutcome) {
    let decided = DecidedCall {
        call_id: outcome.call_id.to_string(),
        tool: outcome.tool.to_string(),
        result: outcome.result.clone(),
        is_content: outcome.is_content,
        keep_until: expires.saturating_add(KEEP_DECIDED_SECS),
    };
    let kept = config.governance.pending.put_decided(ticket_id, decided);
    if let Err(error) = kept.await {
        // The approver gets the outcome; the run will find its call still undecided.
        tracing::error!(%error, %ticket_id, "what came of a decided call could not be kept for its agent run");
    }
}
