//! Read, authorize and run in one step, for a tool that finishes when first polled.

use std::sync::Arc;

use crate::arguments::ToolArguments;
use crate::exact::Now;
use crate::output::{ProducedResult, ResultForm};
use crate::registry::authorize::{Authorization, Authorized, authorize};
use crate::registry::checked::{exact_input, on_demand};
use crate::registry::perform::ran_in_place;
use crate::registry::record::Trail;
use crate::registry::run::Run;
use crate::registry::snapshot::Entry;

/// How far a tool that runs in place got (its arguments left where they are held).
pub(super) enum InPlace {
    /// Not at all: it has no way to run in place (or was not asked whether it may run).
    No,
    /// Not at all: its exact reader could not read the arguments.
    Unread,
    /// Its arguments read, and not allowed to run now: what authorization decided (boxed:
    /// rare, and large enough to make every call move more).
    Stopped(Box<Authorization>),
    /// Run, authorized: what it gave is written in `ended`.
    Ran,
}

/// Read, authorize and run in one step: reads the arguments straight into the parameters
/// of a tool that finishes when first polled, authorizes the call, and runs the function in
/// place (no future made or boxed). Only where nothing between the read and the run waits
/// (no rate limits; nor a record before the run, for which `exact_input` reads nothing).
/// Its result comes in `form`, unless it is content (checked as a value).
#[inline]
pub(super) fn in_place(
    run: &Run<'_>,
    entry: &Arc<Entry>,
    (id, form): (&str, ResultForm),
    arguments: &mut ToolArguments,
    trail: &mut Trail<'_>,
    ended: &mut Option<ProducedResult>,
) -> InPlace {
    let Some((exact, input)) = exact_input(run.config, entry, arguments, run.dry_run) else {
        return InPlace::No;
    };
    let Some(invoke) = exact.now.filter(|_| run.config.governance.runs_in_place) else {
        return InPlace::No;
    };
    let asking = run.asking(entry, id);
    let mut stopped = None;
    let mut may_run = || match authorize(&asking, input.into(), false) {
        Authorization::Decided(verdict, Ok(Authorized::Run(None))) => {
            trail.note(verdict);
            true
        }
        other => {
            stopped = Some(Box::new(other));
            false
        }
    };
    let form = match entry.definition.returns_content {
        true => ResultForm::Value,
        false => form,
    };
    // A token made for the function's context is let go uncancelled: the function is done.
    let (now, _token) = on_demand(run.config, &run.running(id), |context| {
        invoke(context, input, &mut may_run, form)
    });
    match (now, stopped) {
        (Now::Ran(done), _) => {
            *ended = Some(ran_in_place(run.config, entry, (run.caller, id), done));
            InPlace::Ran
        }
        (Now::NotRun, Some(authorization)) => InPlace::Stopped(authorization),
        (Now::Unread, _) => InPlace::Unread,
        // Not run without being asked: the usual path reads and decides.
        (Now::NotRun, None) => InPlace::No,
    }
}
