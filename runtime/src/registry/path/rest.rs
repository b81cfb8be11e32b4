//! The rest of a call that waited: it waits, then walks on from the step it waited at.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;

use futures::FutureExt;
use smol_str::SmolStr;

use crate::call::ToolOutcome;
use crate::error::ToolError;
use crate::output::ProducedResult;
use crate::registry::approve::require_approval;
use crate::registry::authorize::Authorized;
use crate::registry::confirm;
use crate::registry::contain::ContainedDrop;
use crate::registry::perform::{ran, wait};
use crate::registry::record::{Trail, Verdict, before_run, conclude};
use crate::registry::run::Run;
use crate::registry::snapshot::Entry;
use crate::tool::ToolResult;
use crate::util::time::Moment;

use super::walk::{Carried, Wait, Waits, Walk};

/// The rest of a call that waits: owned, borrowing nothing of the poll that began it.
pub(crate) struct Rest {
    pub(super) id: SmolStr,
    pub(super) name: SmolStr,
    pub(super) started: Moment,
    pub(super) trail: Trail<'static>,
    pub(super) waits: Waits,
    pub(super) span: Option<tracing::Span>,
}

impl Rest {
    /// The rest of the call, to its outcome.
    pub(crate) async fn go_on(self, run: Run<'_>) -> ToolOutcome {
        match self.span.clone() {
            Some(span) => tracing::Instrument::instrument(self.walk_on(run), span).await,
            None => self.walk_on(run).await,
        }
    }

    async fn walk_on(self, run: Run<'_>) -> ToolOutcome {
        let Rest {
            id,
            name,
            started,
            trail,
            waits,
            ..
        } = self;
        let entry = Arc::clone(&waits.entry);
        // The trail borrows the entry from here on (a record kept as text reads it back).
        let mut trail: Trail<'_> = trail;
        let mut ended = None;
        let waiting = wait_through(&run, &entry, &id, waits, &mut trail, &mut ended);
        let decided = AssertUnwindSafe(waiting).catch_unwind().await.map(|()| {
            let ended = ended.unwrap_or_else(|| unreachable!("a call that waited ends"));
            crate::output::into_tool_result(ended)
        });
        conclude(
            run.config, run.caller, id, name, decided, started, &mut trail,
        )
        .written()
        .await
    }
}

/// Waits for what the call waits for, then walks on from the next step, until it ends.
async fn wait_through<'e>(
    run: &Run<'_>,
    entry: &'e Arc<Entry>,
    id: &str,
    mut waits: Waits,
    trail: &mut Trail<'e>,
    ended: &mut Option<ProducedResult>,
) {
    loop {
        let Waits { carried, what, .. } = waits;
        let next = match what {
            Wait::Tool(tool, token) => {
                let tool = ContainedDrop::new(&entry.definition.name, tool);
                let finished = wait(run.config, entry, tool, token, run.cancel).await;
                let result = finished
                    .and_then(|finished| ran(run.config, entry, (run.caller, id), finished));
                Next::Ran(carried, result)
            }
            Wait::Limits => limited(run, entry, carried).await,
            Wait::Budgets => counted(run, carried).await,
            Wait::Approval(asked) => {
                let asking = run.asking(entry, id);
                let (reason, staging) = *asked;
                let arguments = carried.arguments.value(entry);
                let decision = require_approval(&asking, &arguments, reason, staging).await;
                drop(arguments);
                Next::Decided(carried, decision)
            }
            Wait::RecordBefore => {
                let record = (&carried.arguments, entry.as_ref());
                match before_run(run.config, run.caller, id, record, trail).await {
                    Ok(()) => Next::Run(carried),
                    Err(error) => Next::Finished(carried, Err(error)),
                }
            }
            Wait::CarriedApproval(result) => {
                let asking = run.asking(entry, id);
                let Carried {
                    arguments, edited, ..
                } = carried;
                let called = edited.unwrap_or_else(|| arguments.value(entry).into_owned());
                let result = confirm::carry_approval(&asking, called, *result).await;
                Next::Finished(Carried::read(arguments, None), result)
            }
        };
        // The next steps are walked in a poll, whose context a tool started there is given.
        let mut next = Some(next);
        let walked = std::future::poll_fn(|context| {
            let walk = Walk {
                run,
                entry,
                id,
                trail: &mut *trail,
                ended: &mut *ended,
                context,
            };
            let next = next
                .take()
                .unwrap_or_else(|| unreachable!("walked in one poll"));
            Poll::Ready(next.walk(walk))
        });
        match walked.await {
            Some(more) => waits = more,
            None => return,
        }
    }
}

/// Where a call that waited walks on from.
enum Next {
    /// Past its rate limits: authorization next.
    Authorize(Carried),
    /// Decided by the person asked.
    Decided(Carried, (Verdict, Result<Authorized, ToolError>)),
    /// Past its budgets: the record before its run next.
    Counted(Carried),
    /// Recorded before its run: the run next.
    Run(Carried),
    /// Its tool finished.
    Ran(Carried, ToolResult),
    /// Ended with this result.
    Finished(Carried, ToolResult),
}

impl Next {
    fn walk(self, walk: Walk<'_, '_, '_>) -> Option<Waits> {
        match self {
            Next::Authorize(carried) => walk.authorize(carried),
            Next::Decided(carried, decision) => walk.decided(carried, decision),
            Next::Counted(carried) => walk.record_before(carried),
            Next::Run(carried) => walk.run_tool(carried),
            Next::Ran(carried, result) => walk.ran(carried, result),
            Next::Finished(carried, result) => walk.finished(carried.arguments, result),
        }
    }
}

/// Past the call's rate limits, or its end where one refuses it.
async fn limited(run: &Run<'_>, entry: &Entry, carried: Carried) -> Next {
    let limits = &run.config.governance.limits;
    let name = &entry.definition.name;
    match Box::pin(limits.check(run.caller.id(), name)).await {
        Ok(()) => Next::Authorize(carried),
        Err(error) => Next::Finished(carried, Err(error)),
    }
}

/// Past the call's budgets, or its end where one is spent.
async fn counted(run: &Run<'_>, carried: Carried) -> Next {
    let budgets = &run.config.governance.budgets;
    match budgets.take_call(run.caller, run.run_id).await {
        Ok(()) => Next::Counted(carried),
        Err(error) => {
            spent(run, &error);
            Next::Finished(carried, Err(error))
        }
    }
}

/// Tells the registry's listeners that a budget refused a call.
fn spent(run: &Run<'_>, error: &ToolError) {
    let Some(spent) = crate::budget::BudgetExhausted::from_error(error) else {
        return;
    };
    run.config.governance.events.publish(|| {
        let kind = crate::events::EventKind::BudgetExhausted {
            budget: spent.budget,
            used: spent.used,
            limit: spent.limit,
        };
        let run_id = run.run_id.map(str::to_owned);
        (run.caller.id().to_owned(), run_id, kind)
    });
}
