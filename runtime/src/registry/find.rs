//! Finding the tool a call names among those its caller may see: an unknown tool and a
//! hidden one get the same answer, with suggestions from the visible ones only.

use std::sync::Arc;

use crate::caller::Caller;
use crate::error::{ErrorCode, ToolError};
use crate::registry::Config;
use crate::registry::record::Trail;
use crate::registry::run::Run;
use crate::registry::snapshot::{CallerView, Entry, RoleView, Snapshot};
use crate::search::{bounded, did_you_mean};
use crate::util::bounded::{MAX_QUOTED, clip};

/// The entry a caller may run, or the error for an unknown (or hidden) tool. Inlined: most
/// calls name a tool their caller sees, and only the lookup is on their path.
#[inline(always)]
pub(crate) fn find<'s>(
    config: &Config,
    snapshot: &'s Snapshot,
    seer: (Option<usize>, &Caller),
    name: &str,
) -> Result<&'s Arc<Entry>, ToolError> {
    match snapshot.visible(seer.0, name) {
        Some(entry) if !hidden(config, seer.1, entry) => Ok(entry),
        _ => Err(not_found(config, snapshot, seer, name)),
    }
}

/// What a call of `name` is answered when the caller must not run it: the `unknown_tool`
/// error [`find`] gives, with its suggestions (also for a tool the caller sees again by now:
/// to it, the call was of no tool).
pub(crate) fn unseen(
    config: &Config,
    snapshot: &Snapshot,
    seer: (Option<usize>, &Caller),
    name: &str,
) -> ToolError {
    find(config, snapshot, seer, name).err().unwrap_or_else(|| {
        let name = clip(name, MAX_QUOTED);
        let message = format!("there is no tool named `{name}`");
        ToolError::new(ErrorCode::UnknownTool, message)
    })
}

/// The entry of `name` if `caller` (of `rank`) sees it: its role may, and no listing stage
/// hides it.
pub(crate) fn seen<'s>(
    config: &Config,
    snapshot: &'s Snapshot,
    (rank, caller): (Option<usize>, &Caller),
    name: &str,
) -> Option<&'s Arc<Entry>> {
    let entry = snapshot.visible(rank, name)?;
    (!hidden(config, caller, entry)).then_some(entry)
}

/// Whether a listing stage hides `entry`'s tool from `caller`'s calls.
#[inline(always)]
fn hidden(config: &Config, caller: &Caller, entry: &Entry) -> bool {
    let stages = &config.governance.stages;
    stages.hide_from_calls() && stages.hides_call(caller, &entry.definition)
}

/// What `caller` (of `rank`) sees: its role's tools, less those a listing stage hides.
pub(crate) fn view_of<'s>(
    config: &Config,
    snapshot: &'s Snapshot,
    (rank, caller): (Option<usize>, &Caller),
) -> Option<CallerView<'s>> {
    let view = snapshot.view(rank)?;
    let stages = &config.governance.stages;
    if !stages.hide_tools() {
        return Some(CallerView::Role(view));
    }
    let tools = view.tools.iter().filter(|tool| !stages.hides(caller, tool));
    Some(CallerView::Own(RoleView::of(tools.cloned().collect())))
}

/// The error for a tool the caller does not see (apart: building it is most of `find`'s
/// code, and no found call runs it).
#[cold]
#[inline(never)]
fn not_found(
    config: &Config,
    snapshot: &Snapshot,
    seer: (Option<usize>, &Caller),
    name: &str,
) -> ToolError {
    if config.reveal_hidden && snapshot.any(name).is_some() {
        return ToolError::new(
            ErrorCode::Forbidden,
            format!("the tool `{name}` exists, but your role may not use it"),
        );
    }
    // The same answer whether the tool is hidden or does not exist: only visible tools are
    // named or suggested.
    let Some(view) = view_of(config, snapshot, seer).filter(|view| !view.tools.is_empty()) else {
        let name = clip(name, MAX_QUOTED);
        let message = format!("there is no tool named `{name}`, and no tools are available");
        return ToolError::new(ErrorCode::UnknownTool, message);
    };
    let suggested = suggestions(config, snapshot, seer, &view, name);
    let name = clip(name, MAX_QUOTED);
    let available = &view.names;
    let message = match suggested.as_slice() {
        [] => format!("there is no tool named `{name}`; the available tools are {available}"),
        names => format!(
            "there is no tool named `{name}`; did you mean {}? The available tools are {available}",
            quoted_alternatives(names)
        ),
    };
    ToolError::new(ErrorCode::UnknownTool, message)
}

/// Visible names close to `name`: alike in spelling, or found by searching its words (as
/// relevant as a suggestion must be).
fn suggestions(
    config: &Config,
    snapshot: &Snapshot,
    seer: (Option<usize>, &Caller),
    view: &RoleView,
    name: &str,
) -> Vec<String> {
    let name = bounded(name, false);
    let searched = seer
        .0
        .map(|rank| config.search.search(name, rank, 3))
        .unwrap_or_default()
        .into_iter()
        .filter(|scored| scored.relevance >= config.suggestion_threshold)
        .filter(|scored| seen(config, snapshot, seer, &scored.name).is_some())
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
