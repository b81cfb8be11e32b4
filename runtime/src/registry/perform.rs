//! Running a tool in the calling task: started, polled once, and (only if still working)
//! raced against its time limit and the caller's cancellation; its panic caught.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use futures::future::CatchUnwind;
use serde_json::Value;

use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::error::{ErrorCode, ToolError};
use crate::output::{Produced, ProducedResult, into_tool_result, sorted};
use crate::registry::Config;
use crate::registry::cancel::Cancel;
use crate::registry::checked::{Started, on_demand};
use crate::registry::checked_arguments::Checked;
use crate::registry::contain::{ContainedDrop, contained_panic};
use crate::registry::run::Running;
use crate::registry::snapshot::Entry;
use crate::tool::{ToolFuture, ToolResult};

/// How the tool starts: from a JSON value, or its future made already.
pub(crate) enum Start<'a> {
    Value(Cow<'a, Value>),
    Started(Started),
}

impl Start<'_> {
    /// The tool's future: made already, or made now from the arguments.
    pub(crate) fn started(self, config: &Config, entry: &Entry, running: &Running<'_>) -> Started {
        match self {
            Start::Started(started) => started,
            Start::Value(arguments) => {
                let start =
                    |context: &mut dyn FnMut() -> _| entry.handler.start(context, &arguments);
                let (future, token) = on_demand(config, running, start);
                Started { future, token }
            }
        }
    }
}

/// A tool's future as a call runs it: its panic caught, and kept in when it is dropped.
pub(crate) type Tool = CatchUnwind<AssertUnwindSafe<ToolFuture>>;

/// The tool's future, contained: whoever drops it (a call at a timeout, or a caller that
/// stops waiting), a panic while dropping it stays inside.
pub(crate) fn contain_tool(entry: &Entry, future: ToolFuture) -> ContainedDrop<'_, Tool> {
    ContainedDrop::new(
        &entry.definition.name,
        AssertUnwindSafe(future).catch_unwind(),
    )
}

/// Waits for a tool that did not finish when first polled: what it gave, or the error for
/// its timeout or the call's cancellation.
pub(crate) async fn wait(
    config: &Config,
    entry: &Entry,
    mut tool: ContainedDrop<'_, Tool>,
    token: Option<CancellationToken>,
    cancel: Cancel<'_>,
) -> Result<Ran, ToolError> {
    let timeout = entry.definition.timeout.or(config.default_timeout);
    let stopped = match race(&mut tool, cancel, timeout).await {
        Ok(finished) => return Ok(finished),
        Err(stopped) => stopped,
    };
    // The tool's future is dropped here, which stops it at its current `.await`; its token
    // tells work it started elsewhere (threads, spawned tasks) to stop too. A tool that
    // finished keeps its token uncancelled.
    drop(tool);
    if let Some(token) = token {
        token.cancel();
    }
    Err(stopped)
}

/// What the tool gave, as the call's result: a panic as an error, content checked, secrets
/// withheld from an error about the arguments, and the application's result stages walked.
#[inline]
pub(crate) fn ran(config: &Config, entry: &Entry, who: Who<'_>, finished: Ran) -> ToolResult {
    match finished {
        Ok(Ok(value)) if plain(config, entry) => Ok(sorted(value)),
        finished => ran_otherwise(config, entry, who, finished),
    }
}

/// Who called, and the call's id: what the result stages are told.
pub(crate) type Who<'a> = (&'a Caller, &'a str);

/// [`ran`] for a tool run in place, whose result may be text (never content, nor a result
/// the stages check: those are asked for as values).
#[inline]
pub(crate) fn ran_in_place(
    config: &Config,
    entry: &Entry,
    who: Who<'_>,
    finished: RanInPlace,
) -> ProducedResult {
    match finished {
        Ok(Ok(Produced::Value(value))) if plain(config, entry) => {
            Ok(Produced::Value(sorted(value)))
        }
        Ok(Ok(produced)) if plain(config, entry) => Ok(produced),
        finished => {
            let finished = finished.map(into_tool_result);
            ran_otherwise(config, entry, who, finished).map(Produced::Value)
        }
    }
}

/// Whether a tool's value is its result as it is: not content to check, and no stage to
/// walk.
#[inline(always)]
fn plain(config: &Config, entry: &Entry) -> bool {
    !entry.definition.returns_content && !config.governance.stages.check_results()
}

/// What a tool run in place gives: its result, or the panic it was stopped by.
pub(crate) type RanInPlace = Result<ProducedResult, Box<dyn Any + Send>>;

/// What a tool gave that is not a plain value: content to check, an error or a panic, or a
/// result the stages check.
#[inline(never)]
fn ran_otherwise(config: &Config, entry: &Entry, who: Who<'_>, finished: Ran) -> ToolResult {
    let result = match finished {
        Ok(Ok(value)) => checked_content(&entry.definition, value, &config.result_limits),
        Ok(Err(error)) => Err(error),
        Err(payload) => Err(panicked(&entry.definition.name, payload)),
    };
    let result = result.map_err(|error| withhold_secrets(entry, error));
    let stages = &config.governance.stages;
    match stages.check_results() {
        true => stages.check_result(who.0, &entry.definition, who.1, result),
        false => result,
    }
}

/// What a tool's future gives: its result, or the panic it was stopped by.
pub(crate) type Ran = Result<ToolResult, Box<dyn Any + Send>>;

/// Waits for a tool that did not finish at once: its result, or the error for a timeout or
/// a cancellation (the tool stopped first wins: it is polled before the others). A time
/// limit the runtime cannot keep ends the call at once (see [`timer`]).
async fn race<F: Future<Output = Ran> + Unpin>(
    tool: &mut ContainedDrop<'_, F>,
    cancel: Cancel<'_>,
    timeout: Option<Duration>,
) -> Result<Ran, ToolError> {
    let timer = timeout.map(timer).transpose()?;
    let deadline = async {
        match timer {
            Some(timer) => timer.await,
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

/// The timer of a time limit, made before the tool is waited for: without Tokio's timers
/// (a runtime built without `enable_time`, or no Tokio runtime at all) no limit can be
/// kept, and a tool that may hang is not waited for without one.
fn timer(limit: Duration) -> Result<tokio::time::Sleep, ToolError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(crate::runtime_needs::outside_tokio(
            "keep the tool's time limit (it did not finish at once)",
        ));
    }
    // Tokio cannot be asked whether its timers are enabled; making one without them panics.
    std::panic::catch_unwind(|| tokio::time::sleep(limit)).map_err(|_| {
        crate::runtime_needs::unavailable(format!(
            "the tool did not finish at once, and its time limit of {} cannot be kept: the Tokio runtime the call was made on has no timers; build it with `enable_time()` or `enable_all()`",
            describe_duration(limit)
        ))
    })
}

/// A content result as a checked list of blocks (a single block becomes a list of one);
/// any other result as it is.
fn checked_content(
    definition: &crate::ToolDefinition,
    value: Value,
    limits: &crate::ResultLimits,
) -> ToolResult {
    if !definition.returns_content {
        return Ok(sorted(value));
    }
    let blocks = crate::result_limits::bound(crate::content::blocks_of(&value)?, limits);
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

fn describe_duration(limit: Duration) -> String {
    if limit.subsec_millis() == 0 && limit.as_secs() > 0 {
        format!("{}s", limit.as_secs())
    } else {
        format!("{}ms", limit.as_millis())
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
