//! One call, from name to outcome: look up, parse, validate, rate-limit, authorize, run with
//! timeout, cancellation and panic isolation, and audit.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::Value;
use smol_str::SmolStr;
use tracing::Instrument;

use crate::approval::AskCaller;
use crate::arguments::ToolArguments;
use crate::bounded::{MAX_QUOTED, clip};
use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::definition::is_valid_tool_name;
use crate::error::{ErrorCode, ToolError};
use crate::input::ClientInput;
use crate::progress::{LogSink, ProgressSink};
use crate::registry::Config;
use crate::registry::cancel::Cancel;
use crate::registry::checked::{Checked, Started, on_demand, read_arguments, read_exact};
use crate::registry::confirm;
use crate::registry::contain::{ContainedDrop, panic_text};
use crate::registry::govern::{Asking, Authorization, Authorized, authorize, require_approval};
use crate::registry::record::{Trail, before_run, finish};
use crate::registry::snapshot::{Entry, RoleView, Snapshot};
use crate::search::{bounded, did_you_mean};
use crate::tool::ToolResult;

/// Who is calling and how.
pub(crate) struct Run<'a> {
    pub(crate) config: &'a Config,
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) rank: Option<usize>,
    pub(crate) caller: &'a Caller,
    pub(crate) cancel: Cancel<'a>,
    pub(crate) dry_run: bool,
    /// The agent run the call belongs to, for its events.
    pub(crate) run_id: Option<&'a str>,
    /// What the caller's client brings (single calls only).
    pub(crate) client: Option<&'a ClientSide>,
}

/// What the caller's client brings to one call ([`CallOptions`](crate::CallOptions)).
#[derive(Default)]
pub(crate) struct ClientSide {
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) log: Option<LogSink>,
    pub(crate) input: Option<Arc<ClientInput>>,
    pub(crate) ask_caller: Option<AskCaller>,
}

// Not an `async fn`: the call is taken apart before its future is made, so the future does
// not keep the whole call beside its parts.
pub(crate) fn execute<'a, 'r>(
    run: &'a Run<'r>,
    call: ToolCall,
) -> impl Future<Output = ToolOutcome> + Send + 'a {
    let ToolCall {
        id,
        name,
        arguments,
    } = call;
    async move {
        let started = Instant::now();
        let mut trail = Trail {
            run_id: run.run_id.map(str::to_owned),
            ..Trail::default()
        };
        // Stores, limits and other application code on the path are contained like the tool:
        // a panic in them ends this call with an error, and every other call goes on.
        let deciding = || {
            AssertUnwindSafe(decide_and_run(run, &id, &name, arguments, &mut trail)).catch_unwind()
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
        // A name no tool has is not echoed back whole (it may be huge); a tool's own is
        // valid, so only a name no tool answered to is checked.
        let name = if trail.found || is_valid_tool_name(&name) {
            name
        } else {
            SmolStr::from(clip(&name, MAX_QUOTED))
        };
        let result = decided.unwrap_or_else(|payload| Err(failed_on_the_way(&name, payload)));
        finish(run.config, run.caller, id, name, result, started, trail).await
    }
}

/// Finds the tool, reads the arguments, authorizes the call and runs it (one future,
/// not nested ones: every level of future would be moved, whole, on every call).
// Written out, not an `async fn`: that would keep its parameters twice in its future.
#[allow(clippy::manual_async_fn)]
fn decide_and_run<'a, 'r>(
    run: &'a Run<'r>,
    id: &'a str,
    name: &'a str,
    arguments: ToolArguments,
    trail: &'a mut Trail<'r>,
) -> impl Future<Output = ToolResult> + Send + 'a {
    async move {
        let (entry, arguments, started) = prepare(run, id, name, arguments, trail)?;
        let running = run.running(id);
        let result = 'run: {
            // The steps most calls skip are boxed: their state would make every call's future
            // larger.
            let limits = &run.config.governance.limits;
            if !run.dry_run
                && !limits.is_empty()
                && let Err(error) = Box::pin(limits.check(run.caller.id(), name)).await
            {
                break 'run Err(error);
            }
            let asking = run.asking(entry, id);
            let (verdict, authorized) = match authorize(&asking, &arguments, run.dry_run) {
                Authorization::Decided(verdict, authorized) => (verdict, authorized),
                // Boxed: the approval path's state is large, and every call's future would
                // carry it.
                Authorization::Approval(reason) => {
                    let arguments = arguments.value(entry);
                    Box::pin(require_approval(&asking, &arguments, reason)).await
                }
            };
            trail.note(verdict);
            let edited = match authorized {
                Ok(Authorized::Run(edited)) => edited,
                Ok(Authorized::DryRun(report)) => break 'run Ok(report),
                Err(error) => break 'run Err(error),
            };
            if run.config.governance.records_before_run() {
                let record = (&arguments, entry.as_ref());
                let recording = before_run(run.config, run.caller, id, name, record, trail);
                if let Err(error) = Box::pin(recording).await {
                    break 'run Err(error);
                }
            }
            let start = match (&edited, started) {
                (Some(edited), _) => Start::Value(Cow::Borrowed(edited)),
                (None, Some(started)) => Start::Started(started),
                (None, None) => Start::Value(arguments.value(entry)),
            };
            let result = perform(run.config, entry, &running, start).await;
            // A call its caller approved through their client, whose tool then asks questions,
            // keeps its approval for the next round (see `AskCaller::Later`).
            if confirm::approved_later(&asking, trail.decision) {
                let arguments = edited.unwrap_or_else(|| arguments.value(entry).into_owned());
                break 'run Box::pin(confirm::carry_approval(&asking, arguments, result)).await;
            }
            result
        };
        if run.config.governance.audits() {
            trail.keep(arguments, entry);
        }
        result
    }
}

/// The entry and the call's arguments, checked (or read straight into the tool's
/// parameters, its future made).
fn prepare<'r>(
    run: &Run<'r>,
    id: &str,
    name: &str,
    arguments: ToolArguments,
    trail: &mut Trail<'r>,
) -> Result<(&'r Arc<Entry>, Checked, Option<Started>), ToolError> {
    if run.cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorCode::Cancelled,
            "the call was cancelled before it started",
        ));
    }
    let entry = find(run.config, run.snapshot, run.rank, name)?;
    trail.seen(&entry.definition);
    match read_exact(run.config, entry, &run.running(id), arguments, run.dry_run) {
        Ok((arguments, started)) => Ok((entry, arguments, Some(started))),
        Err(arguments) => {
            let checked = read_arguments(run.config, entry, arguments, trail)?;
            Ok((entry, Checked::Value(checked), None))
        }
    }
}

impl<'r> Run<'r> {
    fn running<'a>(&'a self, call_id: &'a str) -> Running<'a> {
        Running {
            caller: self.caller,
            call_id,
            cancel: self.cancel,
            client: self.client,
        }
    }

    fn asking<'a>(&'a self, entry: &'a Arc<Entry>, call_id: &'a str) -> Asking<'a> {
        Asking {
            config: self.config,
            entry,
            caller: self.caller,
            call_id,
            cancel: self.cancel,
            run_id: self.run_id,
            ask_caller: self.client.and_then(|client| client.ask_caller.as_ref()),
        }
    }
}

/// The entry a caller may run, or the error for an unknown (or hidden) tool.
pub(crate) fn find<'s>(
    config: &Config,
    snapshot: &'s Snapshot,
    rank: Option<usize>,
    name: &str,
) -> Result<&'s Arc<Entry>, ToolError> {
    if let Some(entry) = snapshot.visible(rank, name) {
        return Ok(entry);
    }
    if config.reveal_hidden && snapshot.any(name).is_some() {
        return Err(ToolError::new(
            ErrorCode::Forbidden,
            format!("the tool `{name}` exists, but your role may not use it"),
        ));
    }
    // The same answer whether the tool is hidden or does not exist: only visible tools are
    // named or suggested.
    let Some(view) = snapshot.view(rank).filter(|view| !view.tools.is_empty()) else {
        let name = clip(name, MAX_QUOTED);
        let message = format!("there is no tool named `{name}`, and no tools are available");
        return Err(ToolError::new(ErrorCode::UnknownTool, message));
    };
    let suggested = suggestions(config, snapshot, rank, view, name);
    let name = clip(name, MAX_QUOTED);
    let available = &view.names;
    let message = match suggested.as_slice() {
        [] => format!("there is no tool named `{name}`; the available tools are {available}"),
        names => format!(
            "there is no tool named `{name}`; did you mean {}? The available tools are {available}",
            quoted_alternatives(names)
        ),
    };
    Err(ToolError::new(ErrorCode::UnknownTool, message))
}

/// Visible names close to `name`: alike in spelling, or found by searching its words (as
/// relevant as a suggestion must be).
fn suggestions(
    config: &Config,
    snapshot: &Snapshot,
    rank: Option<usize>,
    view: &RoleView,
    name: &str,
) -> Vec<String> {
    let name = bounded(name, false);
    let searched = rank
        .map(|rank| config.search.search(name, rank, 3))
        .unwrap_or_default()
        .into_iter()
        .filter(|scored| scored.relevance >= config.suggestion_threshold)
        .filter(|scored| snapshot.visible(rank, &scored.name).is_some())
        .map(|scored| scored.name)
        .collect();
    did_you_mean(name, &view.tools, searched)
}

fn quoted_alternatives(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Who a call runs for, and what goes with it.
#[derive(Clone, Copy)]
pub(crate) struct Running<'a> {
    pub(crate) caller: &'a Caller,
    pub(crate) call_id: &'a str,
    pub(crate) cancel: Cancel<'a>,
    pub(crate) client: Option<&'a ClientSide>,
}

/// How the tool starts: from a JSON value, or its future made already.
pub(crate) enum Start<'a> {
    Value(Cow<'a, Value>),
    Started(Started),
}

/// Runs the tool in the calling task, racing it against its timeout and the caller's
/// cancellation; a panic is caught and becomes an error.
pub(crate) async fn perform(
    config: &Config,
    entry: &Entry,
    running: &Running<'_>,
    start: Start<'_>,
) -> ToolResult {
    let Started {
        future,
        token: tool_token,
    } = match start {
        Start::Started(started) => started,
        Start::Value(arguments) => {
            let start = |context: &mut dyn FnMut() -> _| entry.handler.start(context, &arguments);
            let (future, token) = on_demand(config, running, start);
            Started { future, token }
        }
    };
    // Whoever drops the tool's future (this function at a timeout, or a caller that stops
    // waiting), a panic while dropping it stays inside.
    let mut tool = ContainedDrop::new(
        &entry.definition.name,
        AssertUnwindSafe(future).catch_unwind(),
    );
    // Most tools finish when first polled: the race against the clock and the caller is set
    // up (boxed, its timer and waiters are large) only for a tool that is still working.
    let finished = match futures::poll!(&mut tool) {
        Poll::Ready(finished) => finished,
        Poll::Pending => {
            let timeout = entry.definition.timeout.or(config.default_timeout);
            match Box::pin(race(&mut tool, running.cancel, timeout)).await {
                Ok(finished) => finished,
                Err(stopped) => {
                    // The tool's future is dropped here, which stops it at its current
                    // `.await`; its token tells work it started elsewhere (threads, spawned
                    // tasks) to stop too. A tool that finished keeps its token uncancelled.
                    drop(tool);
                    if let Some(token) = tool_token {
                        token.cancel();
                    }
                    return Err(stopped);
                }
            }
        }
    };
    finished
        .unwrap_or_else(|payload| Err(panicked(&entry.definition.name, payload)))
        .and_then(|value| checked_content(&entry.definition, value))
        .map_err(|error| withhold_secrets(entry, error))
}

/// What a tool's future gives: its result, or the panic it was stopped by.
type Ran = Result<ToolResult, Box<dyn Any + Send>>;

/// Waits for a tool that did not finish at once: its result, or the error for a timeout or
/// a cancellation (the tool stopped first wins: it is polled before the others).
async fn race<F: Future<Output = Ran> + Unpin>(
    tool: &mut ContainedDrop<'_, F>,
    cancel: Cancel<'_>,
    timeout: Option<Duration>,
) -> Result<Ran, ToolError> {
    let deadline = async {
        match timeout {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        finished = tool => Ok(finished),
        _ = cancel.cancelled() => Err(ToolError::new(ErrorCode::Cancelled, "the call was cancelled while the tool was running")),
        _ = deadline => Err(timed_out(timeout.unwrap_or_default())),
    }
}

/// A content result as a checked list of blocks (a single block becomes a list of one);
/// any other result as it is.
fn checked_content(definition: &crate::ToolDefinition, value: Value) -> ToolResult {
    if !definition.returns_content {
        return Ok(value);
    }
    let blocks = crate::content::blocks_of(&value)?;
    serde_json::to_value(blocks).map_err(|error| ToolError::execution(error.to_string()))
}

/// serde's message for arguments the function could not read may quote a value; for a tool
/// with secret parameters it is withheld (the schema, checked before, named the rule).
fn withhold_secrets(entry: &Entry, error: ToolError) -> ToolError {
    let from_deserializing = error
        .details
        .as_ref()
        .is_some_and(|details| details.get("stage").and_then(Value::as_str) == Some("deserialize"));
    if from_deserializing && !entry.definition.secret_arguments.is_empty() {
        return ToolError::invalid_arguments(
            "the arguments could not be read into the tool's parameter types (the details are withheld because this tool takes secret arguments); check each value's type",
        );
    }
    error
}

fn timed_out(limit: Duration) -> ToolError {
    ToolError::new(
        ErrorCode::Timeout,
        format!(
            "the tool did not finish within its time limit of {}; try a smaller request, or try again later",
            describe_duration(limit)
        ),
    )
    .with_details(serde_json::json!({"timeout_ms": limit.as_millis() as u64}))
}

/// The tool panicked.
fn panicked(tool: &str, payload: Box<dyn Any + Send>) -> ToolError {
    contained_panic(tool, payload, "the tool")
}

/// Application code on the call's path (a store, a limit) panicked.
fn failed_on_the_way(tool: &str, payload: Box<dyn Any + Send>) -> ToolError {
    contained_panic(tool, payload, "the call")
}

/// A contained panic: its text goes to the log (it may hold internals), not to the model.
fn contained_panic(tool: &str, payload: Box<dyn Any + Send>, what: &str) -> ToolError {
    let detail = panic_text(payload.as_ref());
    tracing::error!(tool, panic = %detail, "{what} panicked; the panic was contained");
    ToolError::new(
        ErrorCode::Panicked,
        format!(
            "{what} failed unexpectedly (an internal error, not a problem with your arguments)"
        ),
    )
}

fn describe_duration(limit: Duration) -> String {
    if limit.subsec_millis() == 0 && limit.as_secs() > 0 {
        format!("{}s", limit.as_secs())
    } else {
        format!("{}ms", limit.as_millis())
    }
}
