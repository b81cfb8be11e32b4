//! A call's arguments on their way in: parsed, normalized and checked against the schema
//! the model saw, or, for a tool proven to accept only what its schema accepts
//! (`registry::proof`), read straight into its parameter types.

use std::sync::Arc;

use serde_json::Value;

use crate::arguments::{ToolArguments, check_value};
use crate::audit::CallArguments;
use crate::context::{CallId, CancellationToken, ToolContext};
use crate::error::ToolError;
use crate::exact::ExactInput;
use crate::registry::Config;
use crate::registry::checked_arguments::Checked;
use crate::registry::proof::ExactRead;
use crate::registry::record::Trail;
use crate::registry::run::{Run, Running};
use crate::registry::snapshot::Entry;
use crate::tool::ToolFuture;

/// A tool's future, made before the call is authorized (it does nothing until awaited),
/// with the token that tells what it starts elsewhere to stop (none if it took no context).
pub(crate) struct Started {
    pub(crate) future: ToolFuture,
    pub(crate) token: Option<CancellationToken>,
}

/// Reads the arguments straight into the tool's parameters where the tool is proven and
/// nothing on the call's path needs them as a JSON value; otherwise gives them back for
/// [`read_arguments`], which also makes every error.
pub(crate) fn read_exact(
    config: &Config,
    entry: &Entry,
    running: &Running<'_>,
    mut arguments: ToolArguments,
    dry_run: bool,
) -> Result<(Checked, Started), ToolArguments> {
    let Some((exact, input)) = exact_input(config, entry, &mut arguments, dry_run) else {
        return Err(arguments);
    };
    let (future, token) = on_demand(config, running, |context| (exact.invoke)(context, input));
    let Some(future) = future else {
        return Err(arguments);
    };
    Ok((checked(&mut arguments), Started { future, token }))
}

/// The arguments as the tool's exact reader takes them (a value normalized first), where the
/// tool has one and nothing on the call's path needs them as a JSON value.
// Inlined, as the small steps of a call's path below are: a value a call returns is read
// back from memory just after it was written there, and the processor stalls on it.
#[inline]
pub(crate) fn exact_input<'a>(
    config: &Config,
    entry: &'a Entry,
    arguments: &'a mut ToolArguments,
    dry_run: bool,
) -> Option<(&'a ExactRead, ExactInput<'a>)> {
    let limits = &config.limits;
    let exact = entry
        .exact
        .as_ref()
        .filter(|exact| !dry_run && reads_straight(config, exact))?;
    let input = match arguments {
        ToolArguments::Text(text) if text.len() <= limits.max_bytes => ExactInput::Text(text),
        // Only an object is read directly (see `ExactInput::read`); anything else is left
        // as it came, for the checked path to refuse.
        ToolArguments::Value(value) if value.is_object() && check_value(value, limits).is_ok() => {
            entry.normalize(value);
            ExactInput::Value(value)
        }
        _ => return None,
    };
    Some((exact, input))
}

/// Whether a proven tool's arguments are read straight into its parameters under `config`:
/// not too deep for its limits, and not recorded before the run (which wants a value).
#[inline]
pub(crate) fn reads_straight(config: &Config, exact: &ExactRead) -> bool {
    exact.depth <= config.limits.max_depth && !config.governance.records_before_run()
}

/// Arguments an exact reader has read, as checked ones: taken out of where they are held
/// (what is left there is empty).
#[inline]
pub(crate) fn checked(arguments: &mut ToolArguments) -> Checked {
    match arguments {
        ToolArguments::Text(text) => Checked::Text(std::mem::take(text)),
        ToolArguments::Value(value) => Checked::Value(value.take()),
        ToolArguments::Bytes(_) => unreachable!("bytes are read the checked way"),
    }
}

/// Parses, normalizes and validates arguments; what is kept of arguments that cannot be
/// read goes to the trail (readable ones are kept once the call is decided: `Trail::keep`).
pub(crate) fn read_arguments<'r>(
    config: &Config,
    entry: &'r Arc<Entry>,
    arguments: ToolArguments,
    trail: &mut Trail<'r>,
) -> Result<Value, ToolError> {
    let mut arguments = match arguments.into_object_or_summary(&config.limits) {
        Ok(arguments) => arguments,
        Err(refused) => {
            let (error, summary) = *refused;
            trail.arguments = CallArguments::Value(summary);
            return Err(error);
        }
    };
    if let Err(error) = entry.check_in_place(&mut arguments) {
        if config.governance.audits() {
            trail.keep(Checked::Value(arguments), entry);
        }
        return Err(error);
    }
    Ok(arguments)
}

/// Runs `start` with a maker of the tool's context, which a function that takes none never
/// calls: such a call makes no context and no cancellation token. The token, if made, is
/// returned beside what `start` gave.
#[inline]
pub(crate) fn on_demand<R>(
    config: &Config,
    running: &Running<'_>,
    start: impl FnOnce(&mut dyn FnMut() -> ToolContext) -> R,
) -> (R, Option<CancellationToken>) {
    let mut token = None;
    let mut context = || {
        let context = tool_context(config, running);
        token = Some(context.cancel.clone());
        context
    };
    let started = start(&mut context);
    (started, token)
}

/// The context a tool runs with: its own cancellation token, cancelled when the call times
/// out or is cancelled.
pub(crate) fn tool_context(config: &Config, running: &Running<'_>) -> ToolContext {
    let client = running.client;
    ToolContext {
        states: Arc::clone(&config.states),
        caller: running.caller.clone(),
        call_id: CallId(running.call_id.into()),
        cancel: CancellationToken::new(),
        progress: client.and_then(|client| client.progress.clone()),
        log: client.and_then(|client| client.log.clone()),
        input: client.and_then(|client| client.input.clone()),
        run_id: running.run_id.map(Arc::from),
        step_of: client.and_then(|client| client.step_of.clone()),
    }
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
