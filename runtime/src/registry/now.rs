//! A call run to its end in the poll that starts it, where nothing on its path has to wait:
//! found, read, authorized, its tool polled once and its outcome made, with no future of its
//! own. Only what waits (a tool still working, an approval, a record some sink writes) goes
//! on in a boxed future; calls whose path waits from the start (rate limits, a record
//! before the run, a dry run, a span) take the full path ([`execute`]).

use std::future::Future;
use std::mem::take;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::FutureExt;
use serde_json::Value;
use smol_str::SmolStr;

use crate::arguments::ToolArguments;
use crate::call::{ToolCall, ToolOutcome};
use crate::context::CancellationToken;
use crate::exact::Now;
use crate::output::{Produced, ProducedResult, ResultForm};
use crate::registry::Config;
use crate::registry::answer::Ending;
use crate::registry::approve::require_approval;
use crate::registry::authorize::{Authorization, Authorized, Staging, authorize};
use crate::registry::checked::{Started, checked, exact_input, on_demand, read_arguments};
use crate::registry::checked_arguments::Checked;
use crate::registry::contain::ContainedDrop;
use crate::registry::execute::{
    Decided, Ready, authorized, conclude, failed_on_the_way, found, read, run_decided,
    settled_name, start_with,
};
use crate::registry::perform::{Tool, contain_tool, ran, ran_in_place, wait};
use crate::registry::record::{Concluded, Trail, audit};
use crate::registry::run::Run;
use crate::registry::snapshot::{Entry, Snapshot};
use crate::tool::ToolResult;
use crate::util::time::Moment;

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

/// The rest of a call that waits: owned, borrowing nothing of the poll that began it.
pub(crate) struct Rest {
    id: SmolStr,
    name: SmolStr,
    started: Moment,
    trail: Trail<'static>,
    waits: Waits,
}

/// Runs `call` (of a `run` that is [`immediate`]) as far as it goes without waiting, with
/// `context` (the task's, for the tool's first poll). A call that waits goes on in
/// `waiting`, as `go_on` makes it (with a `Run` of its own: this one may borrow what the
/// poll holds); a record still being written may borrow `config`.
///
/// The outcome is returned as the poll's own, not wrapped: a call that ends here is copied
/// once on its way out, not once per layer.
///
/// The call is read where it is held, and its parts taken out only once the tool has run
/// (see [`calling`](super::calling)); what is left of it is empty.
// Never inlined: whether the compiler inlines it into the call's future varies from one
// program to the next, and where it did, its values were spilled and read back around the
// tool's run (measured there: 6 ns a call slower than with it apart).
#[inline(never)]
pub(crate) fn begin<'a, O: Ending>(
    run: Run<'_>,
    config: &'a Config,
    snapshot: &Snapshot,
    call: &mut ToolCall,
    context: &mut Context<'_>,
    go_on: impl FnOnce(Rest) -> Continuation<'a>,
    waiting: &mut Option<Continuation<'a>>,
) -> Poll<O> {
    debug_assert!(immediate(&run), "a call whose path waits begins in full");
    let ToolCall {
        id,
        name,
        arguments,
    } = call;
    let started = crate::util::time::now();
    let mut trail = Trail::of(run.run_id);
    // Where the result is written once, and read from only when the outcome is made (see
    // `calling`: a result handed back through each step would be copied right after it
    // was written, at every step).
    let mut ended = None;
    // Application code on the way (a tool's reading of its arguments, the policy) is
    // contained as on the full path.
    // An outcome that waits for its record is made as a value: a result written as text
    // would be read back.
    // A result the application's stages check is one too.
    let governance = &config.governance;
    let form = match governance.records_may_wait() || governance.stages.check_results() {
        true => ResultForm::Value,
        false => O::FORM,
    };
    let mut attempt = |trail: &mut _, ended: &mut _| {
        let call = (id.as_str(), name.as_str(), form, O::ONLY_IN_PLACE);
        attempt(&run, snapshot, call, arguments, trail, ended, context)
    };
    let on_the_way = match catch_unwind(AssertUnwindSafe(|| attempt(&mut trail, &mut ended))) {
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

/// Whether nothing on the path of `run`'s calls waits before the tool runs (decided before
/// a call is looked at, so that a call whose path waits is begun in full, untouched).
pub(crate) fn immediate(run: &Run<'_>) -> bool {
    immediate_in(run.config, run.dry_run)
}

/// Whether nothing on the path of calls in `config` (dry runs, if `dry_run`) waits before
/// the tool runs.
pub(crate) fn immediate_in(config: &Config, dry_run: bool) -> bool {
    // Which steps may wait was asked of the steps at build; a span is asked for now.
    !dry_run
        && config.governance.waiting_steps.is_empty()
        && !tracing::enabled!(tracing::Level::DEBUG)
}

/// Where a call waits, with what it needs to go on (its tool's entry held, not borrowed:
/// the snapshot it was found in may be gone by then).
enum Waits {
    /// For an approval.
    Approval {
        entry: Arc<Entry>,
        arguments: Checked,
        started: Option<Started>,
        /// Why, and what the application's stages did to the call (boxed: rare).
        asked: Box<(String, Option<Box<Staging>>)>,
    },
    /// For its tool, still working after its first poll.
    Tool {
        entry: Arc<Entry>,
        arguments: Checked,
        tool: Tool,
        token: Option<CancellationToken>,
    },
}

/// Finds the tool, reads the arguments and authorizes the call (running a tool that
/// finishes when first polled in place, its result in `form`), then runs it: as far as it
/// goes without waiting. A call that ends has its result written in `ended`; one that waits
/// says what for. A call made `only_in_place` is given up, with nothing written in
/// `ended`, where its tool is not found or its arguments are not read straight into its
/// parameters: before anything is decided.
fn attempt<'s>(
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
    // Read (and decided, where a tool that runs in place asked); else read here.
    let read = match in_place(run, entry, (id, form), arguments, trail, ended) {
        InPlace::Ran => {
            // Taken where they are held, at the last moment: see `calling`.
            if run.config.governance.audits() {
                trail.keep(checked(arguments), entry);
            }
            return None;
        }
        InPlace::Stopped(decided) => Ok((checked(arguments), None, Some(*decided))),
        InPlace::No | InPlace::Unread if only_in_place => return None,
        InPlace::No => read(run, entry, id, arguments.take(), trail)
            .map(|(arguments, started)| (arguments, started, None)),
        // The exact reader refused them already: the checked path reads them and says why.
        InPlace::Unread => read_arguments(run.config, entry, arguments.take(), trail)
            .map(|value| (Checked::Value(value), None, None)),
    };
    let (arguments, started, decided) = match read {
        Ok(read) => read,
        Err(error) => return end(ended, Err(error)),
    };
    let authorization =
        decided.unwrap_or_else(|| authorize(&run.asking(entry, id), arguments.view(), false));
    let decision = match authorization {
        Authorization::Decided(verdict, authorized) => (verdict, authorized),
        Authorization::Approval(reason, staging) => {
            let entry = Arc::clone(entry);
            return Some(Waits::Approval {
                entry,
                arguments,
                started,
                asked: Box::new((reason, staging)),
            });
        }
    };
    match authorized(trail, decision) {
        Ok(edited) => {
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

/// The call's end, with `result` (written in `ended`).
fn end(ended: &mut Option<ProducedResult>, result: ProducedResult) -> Option<Waits> {
    *ended = Some(result);
    None
}

/// A call allowed to run: its arguments (as an approver edited them, if one did), and its
/// tool's future if made already.
struct Cleared {
    arguments: Checked,
    edited: Option<Value>,
    started: Option<Started>,
}

/// Starts the tool and polls it once: the call's end, or the wait for its tool.
fn poll_once<'e>(
    run: &Run<'_>,
    entry: &'e Arc<Entry>,
    id: &str,
    cleared: Cleared,
    trail: &mut Trail<'e>,
    ended: &mut Option<ProducedResult>,
    context: &mut Context<'_>,
) -> Option<Waits> {
    let Cleared {
        arguments,
        edited,
        started,
    } = cleared;
    let start = start_with(entry, &arguments, edited.as_ref(), started);
    let Started { future, token } = start.started(run.config, entry, &run.running(id));
    let mut tool = contain_tool(entry, future);
    match tool.poll_unpin(context) {
        Poll::Ready(done) => {
            let result = ran(run.config, entry, (run.caller, id), done);
            finished(run, entry, arguments, result, ended, trail)
        }
        Poll::Pending => Some(Waits::Tool {
            entry: Arc::clone(entry),
            arguments,
            tool: tool.into_inner(),
            token,
        }),
    }
}

/// The call's end, with `result` (written in `ended`): its arguments kept for its record.
#[inline]
fn finished<'e>(
    run: &Run<'_>,
    entry: &'e Arc<Entry>,
    arguments: Checked,
    result: ToolResult,
    ended: &mut Option<ProducedResult>,
    trail: &mut Trail<'e>,
) -> Option<Waits> {
    if run.config.governance.audits() {
        trail.keep(arguments, entry);
    }
    end(ended, result.map(Produced::Value))
}

/// How far a tool that runs in place got (its arguments left where they are held).
enum InPlace {
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

/// Reads the arguments straight into the parameters of a tool that finishes when first
/// polled, authorizes the call, and runs the function in place: no future made or boxed.
/// Its result comes in `form`, unless it is content (checked as a value).
#[inline]
fn in_place(
    run: &Run<'_>,
    entry: &Arc<Entry>,
    (id, form): (&str, ResultForm),
    arguments: &mut ToolArguments,
    trail: &mut Trail<'_>,
    ended: &mut Option<ProducedResult>,
) -> InPlace {
    let Some((exact, input)) = exact_input(run.config, entry, arguments, false) else {
        return InPlace::No;
    };
    let Some(invoke) = exact.now else {
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

impl Rest {
    /// The rest of the call, to its outcome.
    pub(crate) async fn go_on(self, run: Run<'_>) -> ToolOutcome {
        let Rest {
            id,
            name,
            started,
            trail,
            waits,
        } = self;
        let entry = match &waits {
            Waits::Approval { entry, .. } | Waits::Tool { entry, .. } => Arc::clone(entry),
        };
        // The trail borrows the entry from here on (a record kept as text reads it back).
        let mut trail: Trail<'_> = trail;
        let waiting = AssertUnwindSafe(wait_for(&run, &entry, &id, waits, &mut trail));
        let decided: Decided = waiting.catch_unwind().await;
        conclude(
            run.config, run.caller, id, name, decided, started, &mut trail,
        )
        .written()
        .await
    }
}

/// Waits for what the call waits for (its approval, or its tool), to its result; its
/// arguments kept for its record.
async fn wait_for<'e>(
    run: &Run<'_>,
    entry: &'e Arc<Entry>,
    id: &str,
    waits: Waits,
    trail: &mut Trail<'e>,
) -> ToolResult {
    let (arguments, result) = match waits {
        Waits::Approval {
            arguments,
            started,
            asked,
            ..
        } => {
            let asking = run.asking(entry, id);
            let (reason, staging) = *asked;
            let called = arguments.value(entry);
            let decision = require_approval(&asking, &called, reason, staging).await;
            let ready = Ready {
                entry,
                arguments: &arguments,
                started,
            };
            let result = run_decided(run, id, ready, decision, trail).await;
            (arguments, result)
        }
        Waits::Tool {
            arguments,
            tool,
            token,
            ..
        } => {
            let tool = ContainedDrop::new(&entry.definition.name, tool);
            let finished = wait(run.config, entry, tool, token, run.cancel).await;
            (
                arguments,
                finished.and_then(|finished| ran(run.config, entry, (run.caller, id), finished)),
            )
        }
    };
    if run.config.governance.audits() {
        trail.keep(arguments, entry);
    }
    result
}
