//! A call's path, the one every entry point walks (a single call, a batch's calls, a call a
//! person approved, HTTP, MCP and the agent through them):
//!
//! ```text
//! find ─► read ─► rate limits ─► authorize ─► budgets ─► record before run ─► run ─► (approval carried) ─► record
//!           │           ⋮             ⋮           ⋮              ⋮              ⋮              ⋮
//!           └ in place: read, authorize and run in one step where nothing before the run waits
//! ```
//!
//! Here: [`begin`], the call's first poll, which finds the tool and reads the arguments
//! (`attempt`). From the tool's entry on, each step is a method of `Walk` (`walk.rs`), in
//! the path's order, and hands the call on to the next as a value (`Carried`); `in_place.rs`
//! reads, authorizes and runs in one step. A step that must wait (`⋮`: a rate limit's store,
//! a budget's store, an approval, the record written before the run, a tool still working, an approval
//! carried to the tool's questions) says so (`Waits`); the call then goes on in a future of
//! its own ([`Rest`], `rest.rs`), which waits and walks on from the next step. A call no step
//! makes wait runs to its outcome in the poll that begins it, with no future of its own:
//! the fast path is what the walk does when nothing waits, not a copy of it. A call a
//! person approved enters with its decision made ([`Entrance`]).
//!
//! The steps' own work lives in the files named after them (`find`, `checked`, `authorize`,
//! `approve`, `record`, `perform`, `confirm`).

mod entrance;
mod in_place;
mod rest;
mod walk;

pub(crate) use entrance::{Approved, AtStart, Entrance};
pub(crate) use rest::Rest;

use std::future::Future;
use std::mem::take;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::arguments::ToolArguments;
use crate::call::{ToolCall, ToolOutcome};
use crate::output::{ProducedResult, ResultForm};
use crate::registry::Config;
use crate::registry::answer::Ending;
use crate::registry::checked::{checked, read, read_arguments};
use crate::registry::checked_arguments::Checked;
use crate::registry::find::found;
use crate::registry::record::{Concluded, Trail, audit};
use crate::registry::record::{failed_on_the_way, settled_name};
use crate::registry::run::Run;
use crate::registry::snapshot::Snapshot;

use in_place::{InPlace, in_place};
use walk::{Carried, Waits, Walk, end};

/// The rest of a call that has to wait, boxed: most calls never make one.
pub(crate) type Continuation<'a> = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// Keeps `continuation` in `waiting`, where the call goes on from, and polls it once (the
/// poll that began the call is its first).
pub(crate) fn wait_on<'a>(
    waiting: &mut Option<Continuation<'a>>,
    continuation: Continuation<'a>,
    context: &mut Context<'_>,
) -> Poll<ToolOutcome> {
    waiting.insert(continuation).as_mut().poll(context)
}

/// Runs `call` of `run` as far as it goes without waiting, with `context` (the task's, for
/// the tool's first poll). A call that waits goes on in `waiting`, as `go_on` makes it
/// (with a `Run` of its own: this one may borrow what the poll holds); a record still
/// being written may borrow `config`.
///
/// The outcome is returned as the poll's own, not wrapped: a call that ends here is copied
/// once on its way out, not once per layer. The call is read where it is held, and its
/// parts taken out only once the tool has run (see [`calling`](super::calling)); what is
/// left of it is empty.
// Never inlined: whether the compiler inlines it into the call's future varies from one
// program to the next, and where it did, its values were spilled and read back around the
// tool's run (measured there: 6 ns a call slower than with it apart).
#[inline(never)]
pub(crate) fn begin<'a, O: Ending, N: Entrance>(
    (run, entrance): (Run<'_>, N),
    config: &'a Config,
    snapshot: &Snapshot,
    call: &mut ToolCall,
    context: &mut Context<'_>,
    go_on: impl FnOnce(Rest) -> Continuation<'a>,
    waiting: &mut Option<Continuation<'a>>,
) -> Poll<O> {
    // A span costs even when nobody listens: it is made only for a subscriber that wants it.
    if tracing::enabled!(tracing::Level::DEBUG) {
        return begin_in_span(
            (run, entrance),
            config,
            snapshot,
            call,
            context,
            go_on,
            waiting,
        );
    }
    walk_first(
        (run, entrance),
        config,
        snapshot,
        call,
        context,
        go_on,
        waiting,
    )
}

/// [`begin`] in the call's span, entered in each poll of the call.
#[cold]
#[inline(never)]
fn begin_in_span<'a, O: Ending, N: Entrance>(
    (run, entrance): (Run<'_>, N),
    config: &'a Config,
    snapshot: &Snapshot,
    call: &mut ToolCall,
    context: &mut Context<'_>,
    go_on: impl FnOnce(Rest) -> Continuation<'a>,
    waiting: &mut Option<Continuation<'a>>,
) -> Poll<O> {
    use crate::util::bounded::{MAX_QUOTED, clip};
    let (tool, caller) = (clip(&call.name, MAX_QUOTED), run.caller.id());
    let span = tracing::debug_span!("tool_call", %tool, call_id = %call.id, caller);
    let _entered = span.enter();
    let go_on = |rest: Rest| {
        let rest = Rest {
            span: Some(span.clone()),
            ..rest
        };
        go_on(rest)
    };
    walk_first(
        (run, entrance),
        config,
        snapshot,
        call,
        context,
        go_on,
        waiting,
    )
}

/// [`begin`]'s walk: the call's first poll.
#[inline(always)]
fn walk_first<'a, O: Ending, N: Entrance>(
    (run, entrance): (Run<'_>, N),
    config: &'a Config,
    snapshot: &Snapshot,
    call: &mut ToolCall,
    context: &mut Context<'_>,
    go_on: impl FnOnce(Rest) -> Continuation<'a>,
    waiting: &mut Option<Continuation<'a>>,
) -> Poll<O> {
    let ToolCall {
        id,
        name,
        arguments,
    } = call;
    let started = crate::util::time::now();
    let mut trail = Trail::of(run.run_id);
    if let Some(approver) = entrance.approver() {
        // Its record says what the person decided, also if its tool is gone since.
        trail.decision = "approved";
        trail.approver = Some(approver.to_owned());
    }
    // Where the result is written once, and read from only when the outcome is made (see
    // `calling`: a result handed back through each step would be copied right after it
    // was written, at every step).
    let mut ended = None;
    // An outcome that waits for its record is made as a value: a result written as text
    // would be read back. A result the application's stages check is one too.
    let governance = &config.governance;
    let form = match governance.records_may_wait() || governance.stages.check_results() {
        true => ResultForm::Value,
        false => O::FORM,
    };
    // Application code on the way (a tool's reading of its arguments, a policy, a stage) is
    // contained: a panic there ends this call with an error, and every other call goes on.
    let mut attempt = |trail: &mut _, ended: &mut _| {
        let call = (id.as_str(), name.as_str(), form, O::ONLY_IN_PLACE);
        attempt::<N>(&run, snapshot, call, arguments, trail, ended, context)
    };
    let on_the_way = match catch_unwind(AssertUnwindSafe(|| attempt(&mut trail, &mut ended))) {
        Ok(None) => None,
        Ok(Some(waits)) => {
            let rest = Rest {
                id: take(id),
                name: take(name),
                started,
                trail: trail.detached(),
                waits,
                span: None,
            };
            return wait_on(waiting, go_on(rest), context).map(O::from);
        }
        Err(payload) => Some(payload),
    };
    let name = settled_name(take(name), &trail);
    if let Some(payload) = on_the_way {
        ended = Some(Err(failed_on_the_way(&name, payload)));
    }
    let Some(result) = &ended else {
        // An attempt that neither waits nor panics writes its result, unless it gave up.
        return Poll::Ready(O::given_up());
    };
    let mut audited = audit(config, run.caller, (id, &name), result, started, &mut trail);
    // Moved out only now, to where the outcome is made.
    let result = ended
        .take()
        .unwrap_or_else(|| unreachable!("it was written"));
    let Some(writing) = audited.writing.take() else {
        // Made where it is returned: a call that ends here moves its outcome no further.
        return Poll::Ready(audited.outcome(take(id), name, result, &mut trail));
    };
    let concluded = Concluded {
        outcome: audited.outcome(take(id), name, result, &mut trail),
        writing: Some(writing),
    };
    wait_on(waiting, Box::pin(concluded.written()), context).map(O::from)
}

/// Finds the tool and reads the arguments (running a tool that finishes when first polled
/// in place, its result in `form`), then walks on: as far as the call goes without
/// waiting. A call that ends has its result written in `ended`; one that waits says what
/// for. A call made `only_in_place` is given up, with nothing written in `ended`, where its
/// tool is not found or its arguments are not read straight into its parameters: before
/// anything is decided.
fn attempt<'s, N: Entrance>(
    run: &Run<'_>,
    snapshot: &'s Snapshot,
    (id, name, form, only_in_place): (&str, &str, ResultForm, bool),
    arguments: &mut ToolArguments,
    trail: &mut Trail<'s>,
    ended: &mut Option<ProducedResult>,
    context: &mut Context<'_>,
) -> Option<Waits> {
    let entry = match found(run, snapshot, name, trail) {
        Ok(entry) => entry,
        Err(_) if only_in_place => return None,
        Err(error) => return end(ended, Err(error)),
    };
    // The rest of the path, walked with what is held here (made only where it is taken).
    macro_rules! walk {
        () => {
            Walk {
                run,
                entry,
                id,
                trail,
                ended,
                context,
            }
        };
    }
    if N::APPROVED {
        let read = read(run, entry, id, arguments.take(), trail);
        return walk!().approved(read);
    }
    // Read (and decided, where a tool that runs in place asked); else read here.
    let read = match in_place(run, entry, (id, form), arguments, trail, ended) {
        InPlace::Ran => {
            // Taken where they are held, at the last moment: see `calling`.
            if run.config.governance.audits() {
                trail.keep(checked(arguments), entry);
            }
            return None;
        }
        InPlace::Stopped(authorization) => {
            let carried = Carried::read(checked(arguments), None);
            return walk!().authorization(carried, *authorization);
        }
        InPlace::No | InPlace::Unread if only_in_place => return None,
        InPlace::No => read(run, entry, id, arguments.take(), trail),
        // The exact reader refused them already: the checked path reads them and says why.
        InPlace::Unread => read_arguments(run.config, entry, arguments.take(), trail)
            .map(|value| (Checked::Value(value), None)),
    };
    match read {
        Ok((arguments, started)) => walk!().limits(Carried::read(arguments, started)),
        Err(error) => end(ended, Err(error)),
    }
}
