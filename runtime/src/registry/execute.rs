//! One call, from name to outcome: look up, parse, validate, run with timeout,
//! cancellation and panic isolation.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use tracing::Instrument;

use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::context::{CallId, CancellationToken, ToolContext};
use crate::error::{ErrorCode, ToolError};
use crate::formats::schema::nulls;
use crate::registry::Config;
use crate::registry::snapshot::{Entry, Snapshot};
use crate::tool::ToolResult;

pub(crate) async fn execute(
    config: &Config,
    snapshot: &Snapshot,
    rank: Option<usize>,
    caller: &Caller,
    call: ToolCall,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let started = Instant::now();
    let ToolCall {
        id,
        name,
        arguments,
    } = call;
    let span = tracing::debug_span!("tool_call", tool = %name, call_id = %id, caller = caller.id());
    let result = async {
        if cancel.is_cancelled() {
            return Err(ToolError::new(
                ErrorCode::Cancelled,
                "the call was cancelled before it started",
            ));
        }
        let entry = find(config, snapshot, rank, &name)?;
        let mut arguments = arguments.into_object(&config.limits)?;
        if entry.strips_nulls {
            nulls::remove_optional_nulls(&entry.definition.input_schema, &mut arguments);
        }
        entry.validator.check(&arguments)?;
        let context = ToolContext {
            states: Arc::clone(&config.states),
            caller: caller.clone(),
            call_id: CallId(id.as_str().into()),
            // Its own token, cancelled below on timeout or cancellation.
            cancel: CancellationToken::new(),
        };
        let timeout = entry.definition.timeout.or(config.default_timeout);
        run(entry, context, arguments, timeout, cancel).await
    }
    .instrument(span.clone())
    .await;
    let duration = started.elapsed();
    span.in_scope(|| match &result {
        Ok(_) => tracing::debug!(?duration, "tool call succeeded"),
        Err(error) => tracing::debug!(?duration, code = %error.code, "tool call failed"),
    });
    ToolOutcome {
        call_id: id,
        tool: name,
        result,
        duration,
    }
}

/// The entry a caller may run, or the error for an unknown (or hidden) tool.
fn find<'s>(
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
            ErrorCode::Custom("forbidden".into()),
            format!("the tool `{name}` exists, but your role may not use it"),
        ));
    }
    // The same answer whether the tool is hidden or does not exist.
    let available = snapshot
        .view(rank)
        .map(|view| Arc::clone(&view.names))
        .unwrap_or_default();
    let message = if available.is_empty() {
        format!("there is no tool named `{name}`, and no tools are available")
    } else {
        format!("there is no tool named `{name}`; the available tools are {available}")
    };
    Err(ToolError::new(ErrorCode::UnknownTool, message))
}

/// Runs the tool in the caller's task, racing it against its timeout and the caller's
/// cancellation; a panic is caught and becomes an error. (A batch runs each of its parallel
/// calls in a task of its own, so they also use several cores.)
async fn run(
    entry: &Entry,
    context: ToolContext,
    arguments: serde_json::Value,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> ToolResult {
    let tool_token = context.cancel.clone();
    let tool = AssertUnwindSafe(entry.handler.start(context, arguments)).catch_unwind();
    let deadline = async {
        match timeout {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    let result = tokio::select! {
        biased;
        finished = tool => return finished.unwrap_or_else(|payload| Err(panicked(&entry.definition.name, payload))),
        _ = cancel.cancelled() => Err(ToolError::new(ErrorCode::Cancelled, "the call was cancelled while the tool was running")),
        _ = deadline => Err(timed_out(timeout.unwrap_or_default())),
    };
    // The tool's future is dropped here, which stops it at its current `.await`; its token
    // tells work it started elsewhere (threads, spawned tasks) to stop too.
    tool_token.cancel();
    result
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

fn panicked(tool: &str, payload: Box<dyn Any + Send>) -> ToolError {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic payload".to_owned());
    // The panic text may hold internals: it goes to the log, not to the model.
    tracing::error!(tool, panic = %detail, "tool panicked; the panic was contained");
    ToolError::new(
        ErrorCode::Panicked,
        "the tool failed unexpectedly (an internal error, not a problem with your arguments)",
    )
}

fn describe_duration(limit: Duration) -> String {
    if limit.subsec_millis() == 0 && limit.as_secs() > 0 {
        format!("{}s", limit.as_secs())
    } else {
        format!("{}ms", limit.as_millis())
    }
}
