//! A call made only if its tool runs in place with its arguments read straight into its
//! parameters: given up, before anything is decided or recorded, where the tool is not found
//! or its arguments are not so read; its caller then makes it the usual way. For arguments
//! that may not be what they seem (the HTTP endpoint's text cut out of a body on the guess
//! that it is one JSON object, which only a reader that takes the whole of it confirms).
//!
//! Functions of their own rather than arms of [`begin`](super::begin), `attempt` and
//! [`Single`](crate::registry::calling), and not sharing their parts, so that the plain
//! call's code stays exactly as it was: builds with such an arm (even one compiled out for
//! the other endings) or with their tail made a function of its own timed the plain call
//! 10–30 ns slower in `call_rounds`, though callgrind counted the same instructions.

use std::mem::take;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Poll};

use super::{Cleared, Continuation, InPlace, Rest, Waits, finished, in_place, poll_once, wait_on};
use crate::arguments::ToolArguments;
use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::output::{ProducedResult, ResultForm};
use crate::registry::answer::{Answer, IfInPlace};
use crate::registry::calling::Begin;
use crate::registry::checked::checked;
use crate::registry::execute::{authorized, failed_on_the_way, found, settled_name};
use crate::registry::govern::Authorization;
use crate::registry::record::{Concluded, Trail, audit};
use crate::registry::run::Run;
use crate::registry::snapshot::Snapshot;
use crate::registry::{Config, Registry};

/// A single call to be made only in place (see the module).
pub(crate) struct InPlaceOnly<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) caller: &'a Caller,
    pub(crate) call: ToolCall,
}

impl<'a> Begin<'a> for InPlaceOnly<'a> {
    type Ending = IfInPlace;

    #[inline]
    fn begin(
        &mut self,
        context: &mut Context<'_>,
        waiting: &mut Option<Continuation<'a>>,
    ) -> Poll<IfInPlace> {
        let InPlaceOnly {
            registry,
            caller,
            call,
        } = self;
        let (registry, caller) = (*registry, *caller);
        let config = &registry.inner.config;
        // Nothing runs in place where the call's path waits from the start.
        if !super::immediate_in(config, false) {
            return Poll::Ready(IfInPlace(None));
        }
        let snapshot = registry.inner.snapshot.load();
        let run = registry.run_for(caller, None);
        let go_on = |rest: Rest| Box::pin(rest.go_on(run)) as Continuation<'a>;
        begin_in_place(run, config, &snapshot, call, context, go_on, waiting)
    }
}

/// [`begin`](super::begin) for a call made only in place: as far as it goes without
/// waiting, or given up (the answer none) with nothing decided or recorded.
#[inline(never)]
fn begin_in_place<'a>(
    run: Run<'_>,
    config: &'a Config,
    snapshot: &Snapshot,
    call: &mut ToolCall,
    context: &mut Context<'_>,
    go_on: impl FnOnce(Rest) -> Continuation<'a>,
    waiting: &mut Option<Continuation<'a>>,
) -> Poll<IfInPlace> {
    let ToolCall {
        id,
        name,
        arguments,
    } = call;
    let started = crate::time::now();
    let mut trail = Trail::of(run.run_id);
    let mut ended = None;
    let form = match config.governance.records_may_wait() {
        true => ResultForm::Value,
        false => ResultForm::Text,
    };
    let call = (id.as_str(), name.as_str(), form);
    let mut attempt = |trail: &mut _, ended: &mut _| {
        attempt_in_place(&run, snapshot, call, arguments, trail, ended, context)
    };
    let on_the_way = match catch_unwind(AssertUnwindSafe(|| attempt(&mut trail, &mut ended))) {
        Ok(None) if ended.is_none() => return Poll::Ready(IfInPlace(None)),
        Ok(None) => None,
        Ok(Some(waits)) => {
            let trail = trail.detached();
            let rest = Rest {
                id: take(id),
                name: take(name),
                started,
                trail,
                waits,
            };
            return wait_on(waiting, go_on(rest), context).map(IfInPlace::from);
        }
        Err(payload) => Some(payload),
    };
    let name = settled_name(take(name), &trail);
    let result = match on_the_way {
        Some(payload) => Err(failed_on_the_way(&name, payload)),
        None => ended
            .take()
            .unwrap_or_else(|| unreachable!("a call not given up has its result")),
    };
    let mut audited = audit(
        config,
        run.caller,
        (id, &name),
        &result,
        started,
        &mut trail,
    );
    let answer: Answer = audited.outcome(take(id), name, result, &mut trail);
    let Some(writing) = audited.writing.take() else {
        return Poll::Ready(IfInPlace(Some(answer)));
    };
    let concluded = Concluded {
        outcome: ToolOutcome::from(answer),
        writing: Some(writing),
    };
    wait_on(waiting, Box::pin(concluded.written()), context).map(IfInPlace::from)
}

/// [`attempt`](super::attempt) for a call made only in place: given up, with nothing
/// written in `ended`, where its tool is not found or its arguments are not read straight
/// into its parameters (before anything is decided); else as `attempt` goes on.
fn attempt_in_place<'s>(
    run: &Run<'_>,
    snapshot: &'s Snapshot,
    (id, name, form): (&str, &str, ResultForm),
    arguments: &mut ToolArguments,
    trail: &mut Trail<'s>,
    ended: &mut Option<ProducedResult>,
    context: &mut Context<'_>,
) -> Option<Waits> {
    let entry = found(run, snapshot, name, trail).ok()?;
    match in_place(run, entry, (id, form), arguments, trail, ended) {
        InPlace::Ran => {
            if run.config.governance.audits() {
                trail.keep(checked(arguments), entry);
            }
            None
        }
        InPlace::Stopped(decided) => {
            let arguments = checked(arguments);
            // As `attempt` goes on from a decision (not shared: see the module).
            let decision = match *decided {
                Authorization::Decided(verdict, authorized) => (verdict, authorized),
                Authorization::Approval(reason) => {
                    let entry = Arc::clone(entry);
                    let started = None;
                    return Some(Waits::Approval {
                        entry,
                        arguments,
                        started,
                        reason,
                    });
                }
            };
            match authorized(trail, decision) {
                Ok(edited) => {
                    let started = None;
                    let cleared = Cleared {
                        arguments,
                        edited,
                        started,
                    };
                    poll_once(run, entry, id, cleared, trail, ended, context)
                }
                Err(result) => finished(run, entry, arguments, result, ended, trail),
            }
        }
        InPlace::No | InPlace::Unread => None,
    }
}
