//! One call down the full path, from name to outcome: look up, parse, validate, rate-limit,
//! authorize, run with timeout, cancellation and panic isolation, and audit. A call whose
//! path need not wait takes the same steps without a future of its own (`registry::now`);
//! both share the steps here.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::Either;
use serde_json::Value;
use smol_str::SmolStr;
use tracing::Instrument;

use crate::arguments::ToolArguments;
use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::definition::is_valid_tool_name;
use crate::error::{ErrorCode, ToolError};
use crate::registry::Config;
use crate::registry::approve::require_approval;
use crate::registry::authorize::{Authorization, Authorized, authorize};
use crate::registry::checked::{Started, read_arguments, read_exact};
use crate::registry::checked_arguments::Checked;
use crate::registry::confirm;
use crate::registry::contain::contained_panic;
use crate::registry::find::find;
use crate::registry::perform::{Start, perform};
use crate::registry::record::{Concluded, Trail, Verdict, before_run, finish, reject};
use crate::registry::run::Run;
use crate::registry::snapshot::{Entry, Snapshot};
use crate::tool::ToolResult;
use crate::util::bounded::{MAX_QUOTED, clip};
use crate::util::time::Moment;

/// What a call's path gives before its outcome is made: its result, or the panic of
/// application code on the way (a store, a limit).
pub(crate) type Decided = Result<ToolResult, Box<dyn Any + Send>>;

/// The call's future, every step in it, inside the application's wrappers if it has any.
pub(crate) fn execute<'a, 's: 'a>(
    run: &'a Run<'_>,
    snapshot: &'s Snapshot,
    call: ToolCall,
) -> impl Future<Output = ToolOutcome> + Send + 'a {
    let stages = &run.config.governance.stages;
    if !stages.wrap_calls() {
        return Either::Left(walk(run, snapshot, call));
    }
    let (id, name) = (call.id.clone(), call.name.clone());
    let inner = Box::pin(walk(run, snapshot, call));
    match stages.wrapped(run.caller, (&id, &name), inner) {
        Ok(wrapped) => Either::Right(wrapped),
        Err(error) => {
            // The call never began: its refusal is recorded like any other.
            let call = ToolCall::new(id, name, Value::Object(Default::default()));
            Either::Right(Box::pin(reject(run.config, run.caller, call, error)))
        }
    }
}

/// The call's future, every step in it (a span around it where a subscriber wants one).
// Not an `async fn`: the call is taken apart before its future is made, so the future does
// not keep the whole call beside its parts.
fn walk<'a, 's: 'a>(
    run: &'a Run<'_>,
    snapshot: &'s Snapshot,
    call: ToolCall,
) -> impl Future<Output = ToolOutcome> + Send + 'a {
    let ToolCall {
        id,
        name,
        arguments,
    } = call;
    async move {
        let started = crate::util::time::now();
        let mut trail = Trail::of(run.run_id);
        // Stores, limits and other application code on the path are contained like the tool:
        // a panic in them ends this call with an error, and every other call goes on.
        let deciding = || {
            let deciding = decide_and_run(run, snapshot, &id, &name, arguments, &mut trail);
            AssertUnwindSafe(deciding).catch_unwind()
        };
        // A span costs even when nobody listens: it is made only for a subscriber that wants
        // it. (The future is made in each `.await`, not bound before: a bound future would be
        // kept beside its moved copy in this function's own.)
        let decided = if tracing::enabled!(tracing::Level::DEBUG) {
            let (tool, caller) = (clip(&name, MAX_QUOTED), run.caller.id());
            let span = tracing::debug_span!("tool_call", %tool, call_id = %id, caller);
            deciding().instrument(span).await
        } else {
            deciding().await
        };
        conclude(
            run.config, run.caller, id, name, decided, started, &mut trail,
        )
        .written()
        .await
    }
}

/// The outcome of a decided call of `caller`, audited (see [`Concluded`]). Always inlined:
/// left to itself the compiler calls it, and every call's outcome would be moved once more
/// (45 instructions a call, measured).
#[inline(always)]
pub(crate) fn conclude<'a>(
    config: &'a Config,
    caller: &Caller,
    id: SmolStr,
    name: SmolStr,
    decided: Decided,
    started: Moment,
    trail: &mut Trail<'_>,
) -> Concluded<'a> {
    let (name, result) = settle(name, decided, trail);
    finish(config, caller, id, name, result, started, trail)
}

/// The name an outcome gives back, and the call's result (the error for a panic on the
/// way where there was one).
#[inline(always)]
pub(crate) fn settle(name: SmolStr, decided: Decided, trail: &Trail<'_>) -> (SmolStr, ToolResult) {
    let name = settled_name(name, trail);
    let result = decided.unwrap_or_else(|payload| Err(failed_on_the_way(&name, payload)));
    (name, result)
}

/// The name an outcome gives back: a name no tool has is not echoed back whole (it may be
/// huge); a tool's own is valid, so only a name no tool answered to is checked.
#[inline(always)]
pub(crate) fn settled_name(name: SmolStr, trail: &Trail<'_>) -> SmolStr {
    if trail.found || is_valid_tool_name(&name) {
        name
    } else {
        SmolStr::from(clip(&name, MAX_QUOTED))
    }
}

/// Finds the tool, reads the arguments, authorizes the call and runs it (one future,
/// not nested ones: every level of future would be moved, whole, on every call).
// Written out, not an `async fn`: that would keep its parameters twice in its future.
#[allow(clippy::manual_async_fn)]
fn decide_and_run<'a, 's>(
    run: &'a Run<'_>,
    snapshot: &'s Snapshot,
    id: &'a str,
    name: &'a str,
    arguments: ToolArguments,
    trail: &'a mut Trail<'s>,
) -> impl Future<Output = ToolResult> + Send + 'a
where
    's: 'a,
{
    async move {
        let (entry, arguments, started) = prepare(run, snapshot, id, name, arguments, trail)?;
        let result = 'run: {
            // The steps most calls skip are boxed: their state would make every call's future
            // larger.
            let limits = &run.config.governance.limits;
            if !run.dry_run
                && !limits.is_empty()
                && let Err(error) =
                    Box::pin(limits.check(run.caller.id(), &entry.definition.name)).await
            {
                break 'run Err(error);
            }
            let asking = run.asking(entry, id);
            let decision = match authorize(&asking, arguments.view(), run.dry_run) {
                Authorization::Decided(verdict, authorized) => (verdict, authorized),
                // Boxed: the approval path's state is large, and every call's future would
                // carry it.
                Authorization::Approval(reason, staging) => {
                    let arguments = arguments.value(entry);
                    Box::pin(require_approval(&asking, &arguments, reason, staging)).await
                }
            };
            let ready = Ready {
                entry,
                arguments: &arguments,
                started,
            };
            run_decided(run, id, ready, decision, trail).await
        };
        if run.config.governance.audits() {
            trail.keep(arguments, entry);
        }
        result
    }
}

/// A call about to be decided: its tool, its checked arguments, and the tool's future if
/// the arguments were read straight into its parameters.
pub(crate) struct Ready<'e, 'c> {
    pub(crate) entry: &'e Arc<Entry>,
    pub(crate) arguments: &'c Checked,
    pub(crate) started: Option<Started>,
}

/// Runs a call as decided: refused, a dry run's report, or run (after its record, where one
/// is written before).
pub(crate) async fn run_decided(
    run: &Run<'_>,
    id: &str,
    ready: Ready<'_, '_>,
    decision: (Verdict, Result<Authorized, ToolError>),
    trail: &mut Trail<'_>,
) -> ToolResult {
    let Ready {
        entry,
        arguments,
        started,
    } = ready;
    let edited = match authorized(trail, decision) {
        Ok(edited) => edited,
        Err(ended) => return ended,
    };
    if run.config.governance.records_before_run() {
        let record = (arguments, entry.as_ref());
        let recording = before_run(run.config, run.caller, id, record, trail);
        Box::pin(recording).await?;
    }
    let start = start_with(entry, arguments, edited.as_ref(), started);
    let result = perform(run.config, entry, &run.running(id), start).await;
    // A call its caller approved through their client, whose tool then asks questions,
    // keeps its approval for the next round (see `AskCaller::Later`).
    let asking = run.asking(entry, id);
    if confirm::approved_later(&asking, trail.decision) {
        let arguments = edited.unwrap_or_else(|| arguments.value(entry).into_owned());
        return Box::pin(confirm::carry_approval(&asking, arguments, result)).await;
    }
    result
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

/// How the tool starts: with an approver's edit, with its future made already, or from
/// the checked arguments.
pub(crate) fn start_with<'c>(
    entry: &Entry,
    arguments: &'c Checked,
    edited: Option<&'c Value>,
    started: Option<Started>,
) -> Start<'c> {
    match (edited, started) {
        (Some(edited), _) => Start::Value(Cow::Borrowed(edited)),
        (None, Some(started)) => Start::Started(started),
        (None, None) => Start::Value(arguments.value(entry)),
    }
}

/// The entry and the call's arguments, checked (or read straight into the tool's
/// parameters, its future made).
pub(crate) fn prepare<'s>(
    run: &Run<'_>,
    snapshot: &'s Snapshot,
    id: &str,
    name: &str,
    arguments: ToolArguments,
    trail: &mut Trail<'s>,
) -> Result<(&'s Arc<Entry>, Checked, Option<Started>), ToolError> {
    let entry = found(run, snapshot, name, trail)?;
    let (arguments, started) = read(run, entry, id, arguments, trail)?;
    Ok((entry, arguments, started))
}

/// The tool the call names, if it is not cancelled already and its caller sees the tool.
pub(crate) fn found<'s>(
    run: &Run<'_>,
    snapshot: &'s Snapshot,
    name: &str,
    trail: &mut Trail<'s>,
) -> Result<&'s Arc<Entry>, ToolError> {
    if run.cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorCode::Cancelled,
            "the call was cancelled before it started",
        ));
    }
    let entry = find(run.config, snapshot, (run.rank, run.caller), name)?;
    trail.seen(entry, name);
    Ok(entry)
}

/// The call's arguments, checked (or read straight into the tool's parameters, its future
/// made).
pub(crate) fn read<'s>(
    run: &Run<'_>,
    entry: &'s Arc<Entry>,
    id: &str,
    arguments: ToolArguments,
    trail: &mut Trail<'s>,
) -> Result<(Checked, Option<Started>), ToolError> {
    match read_exact(run.config, entry, &run.running(id), arguments, run.dry_run) {
        Ok((arguments, started)) => Ok((arguments, Some(started))),
        Err(arguments) => {
            let checked = read_arguments(run.config, entry, arguments, trail)?;
            Ok((Checked::Value(checked), None))
        }
    }
}

/// Application code on the call's path (a store, a limit) panicked.
pub(crate) fn failed_on_the_way(tool: &str, payload: Box<dyn Any + Send>) -> ToolError {
    contained_panic(tool, payload, "the call")
}
