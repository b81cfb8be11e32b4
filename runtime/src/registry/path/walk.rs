//! The steps of a call's path from its tool's entry on, each handing the call to the next,
//! and what a call carries between them.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::FutureExt;
use serde_json::Value;

use crate::context::CancellationToken;
use crate::error::ToolError;
use crate::output::{Produced, ProducedResult};
use crate::registry::authorize::{Authorization, Authorized, Staging, authorize, authorized};
use crate::registry::checked::Started;
use crate::registry::checked_arguments::Checked;
use crate::registry::confirm;
use crate::registry::perform::{Tool, contain_tool, ran, start_with};
use crate::registry::record::{Trail, Verdict};
use crate::registry::run::Run;
use crate::registry::snapshot::Entry;
use crate::tool::ToolResult;

/// What a call carries from step to step once its arguments are read: the arguments, the
/// tool's future if they were read straight into its parameters, and (once it is decided)
/// an approver's or a stage's edit of them.
pub(crate) struct Carried {
    pub(super) arguments: Checked,
    pub(super) started: Option<Started>,
    pub(super) edited: Option<Value>,
}

/// Where a call waits, with what it carries (its tool's entry held, not borrowed: the
/// snapshot it was found in may be gone by then).
pub(crate) struct Waits {
    pub(super) entry: Arc<Entry>,
    pub(super) carried: Carried,
    pub(super) what: Wait,
}

/// What a call waits for.
pub(super) enum Wait {
    /// Its rate limits' answer.
    Limits,
    /// Its budgets' answer.
    Budgets,
    /// An approval: why, and what the application's stages did to the call (boxed: rare).
    Approval(Box<(String, Option<Box<Staging>>)>),
    /// The record written before its run.
    RecordBefore,
    /// Its tool, still working after its first poll.
    Tool(Tool, Option<CancellationToken>),
    /// Its caller's approval, carried to the questions its tool asks (boxed: rare).
    CarriedApproval(Box<ToolResult>),
}

/// The call's end, with `result` (written in `ended`).
pub(super) fn end(ended: &mut Option<ProducedResult>, result: ProducedResult) -> Option<Waits> {
    *ended = Some(result);
    None
}

impl Carried {
    pub(super) fn read(arguments: Checked, started: Option<Started>) -> Self {
        Carried {
            arguments,
            started,
            edited: None,
        }
    }
}

/// A call on its way down the path from its tool's entry on: each step below is one
/// method, in the path's order, and hands the call to the next.
pub(super) struct Walk<'w, 'e, 'c> {
    pub(super) run: &'w Run<'w>,
    pub(super) entry: &'e Arc<Entry>,
    pub(super) id: &'w str,
    pub(super) trail: &'w mut Trail<'e>,
    pub(super) ended: &'w mut Option<ProducedResult>,
    pub(super) context: &'w mut Context<'c>,
}

impl Walk<'_, '_, '_> {
    /// Rate limits: counted in their store, which may wait (not for a dry run).
    #[inline]
    pub(super) fn limits(self, carried: Carried) -> Option<Waits> {
        if !self.run.dry_run && !self.run.config.governance.limits.is_empty() {
            return self.waits(carried, Wait::Limits);
        }
        self.authorize(carried)
    }

    /// Authorize: the application's call stages, then the policy.
    #[inline]
    pub(super) fn authorize(self, carried: Carried) -> Option<Waits> {
        let asking = self.run.asking(self.entry, self.id);
        let authorization = authorize(&asking, carried.arguments.view(), self.run.dry_run);
        self.authorization(carried, authorization)
    }

    /// What authorization gave: decided, or to be approved by someone (which waits).
    #[inline]
    pub(super) fn authorization(
        self,
        carried: Carried,
        authorization: Authorization,
    ) -> Option<Waits> {
        match authorization {
            Authorization::Decided(verdict, authorized) => {
                self.decided(carried, (verdict, authorized))
            }
            Authorization::Approval(reason, staging) => {
                self.waits(carried, Wait::Approval(Box::new((reason, staging))))
            }
        }
    }

    /// A call decided: refused, reported (a dry run), or cleared to run with the arguments
    /// as called or as an approver edited them.
    #[inline]
    pub(super) fn decided(
        self,
        mut carried: Carried,
        decision: (Verdict, Result<Authorized, ToolError>),
    ) -> Option<Waits> {
        match authorized(self.trail, decision) {
            Ok(edited) => {
                carried.edited = edited;
                self.budgets(carried)
            }
            Err(result) => self.finished(carried.arguments, result),
        }
    }

    /// A call a person approved, read again: it runs as decided.
    pub(super) fn approved(
        self,
        read: Result<(Checked, Option<Started>), ToolError>,
    ) -> Option<Waits> {
        match read {
            Ok((arguments, started)) => {
                let approved = (Verdict::new("approved"), Ok(Authorized::Run(None)));
                self.decided(Carried::read(arguments, started), approved)
            }
            Err(error) => end(self.ended, Err(error)),
        }
    }

    /// Budgets: a call cleared to run takes one from its tool-call budgets, kept in their
    /// store, which may wait.
    #[inline]
    pub(super) fn budgets(self, carried: Carried) -> Option<Waits> {
        if self.run.config.governance.budgets.counts_calls() {
            return self.waits(carried, Wait::Budgets);
        }
        self.record_before(carried)
    }

    /// The record written before the run ([`AuditMode::BeforeRun`](crate::audit::AuditMode)),
    /// which waits for its store.
    #[inline]
    pub(super) fn record_before(self, carried: Carried) -> Option<Waits> {
        if self.run.config.governance.records_before_run() {
            return self.waits(carried, Wait::RecordBefore);
        }
        self.run_tool(carried)
    }

    /// Run: the tool started and polled once; its end, or the wait for it.
    #[inline]
    pub(super) fn run_tool(self, carried: Carried) -> Option<Waits> {
        let Carried {
            arguments,
            started,
            edited,
        } = carried;
        let (run, entry, id) = (self.run, self.entry, self.id);
        let start = start_with(entry, &arguments, edited.as_ref(), started);
        let Started { future, token } = start.started(run.config, entry, &run.running(id));
        let mut tool = contain_tool(entry, future);
        let carried = Carried {
            arguments,
            started: None,
            edited,
        };
        match tool.poll_unpin(self.context) {
            Poll::Ready(done) => {
                let result = ran(run.config, entry, (run.caller, id), done);
                self.ran(carried, result)
            }
            Poll::Pending => self.waits(carried, Wait::Tool(tool.into_inner(), token)),
        }
    }

    /// What the tool gave (checked, and through the application's result stages): the
    /// call's end, unless its caller's approval is carried to the questions it asks.
    #[inline]
    pub(super) fn ran(self, carried: Carried, result: ToolResult) -> Option<Waits> {
        // Only a caller whose client answers questions can have approved the call itself.
        if self.run.client.is_some()
            && confirm::approved_later(&self.run.asking(self.entry, self.id), self.trail.decision)
        {
            return self.waits(carried, Wait::CarriedApproval(Box::new(result)));
        }
        self.finished(carried.arguments, result)
    }

    /// The call's end, with `result` (written in `ended`): its arguments kept for its record.
    #[inline]
    pub(super) fn finished(self, arguments: Checked, result: ToolResult) -> Option<Waits> {
        if self.run.config.governance.audits() {
            self.trail.keep(arguments, self.entry);
        }
        end(self.ended, result.map(Produced::Value))
    }

    /// The call waits for `what`, carrying `carried`.
    #[cold]
    fn waits(self, carried: Carried, what: Wait) -> Option<Waits> {
        Some(Waits {
            entry: Arc::clone(self.entry),
            carried,
            what,
        })
    }
}
