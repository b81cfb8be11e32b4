//! What a registry is built with: its settings, and the rules that govern calls (policy,
//! approval, rate limits, audit). Fixed at build time; the call path only reads them.

use std::sync::Arc;
use std::time::Duration;

use crate::approval::{Approver, GrantStore, PendingStore, TicketSigner};
use crate::arguments::ArgumentLimits;
use crate::audit::{AuditMode, AuditSink, AuditStore, MemoryAuditStore};
use crate::caller::Caller;
use crate::context::StateMap;
use crate::events::EventBus;
use crate::formats::Provider;
use crate::policy::Policy;
use crate::rate_limits::RateLimits;
use crate::registry::BatchMode;
use crate::registry::snapshot::{Entry, Rules};
use crate::registry::stages::Stages;
use crate::roles::Roles;
use crate::search::SearchIndex;

/// Settings fixed at build time.
pub(crate) struct Config {
    /// Where spans and metrics go, for the adapters' own spans (the calls' are stages).
    #[cfg(feature = "otel")]
    pub(crate) telemetry: Option<crate::telemetry::Telemetry>,
    pub(crate) roles: Roles,
    pub(crate) states: Arc<StateMap>,
    pub(crate) default_timeout: Option<Duration>,
    pub(crate) limits: ArgumentLimits,
    pub(crate) result_limits: crate::ResultLimits,
    pub(crate) max_concurrency: usize,
    pub(crate) batch_mode: BatchMode,
    pub(crate) reveal_hidden: bool,
    pub(crate) providers: Vec<Provider>,
    /// Every tool, for search; changed with the tools.
    pub(crate) search: SearchIndex,
    pub(crate) suggestion_threshold: f64,
    pub(crate) governance: Governance,
}

impl Config {
    pub(crate) fn rules(&self) -> Rules<'_> {
        Rules {
            roles: &self.roles,
            states: &self.states,
            providers: &self.providers,
        }
    }
}

/// The registry's rules for deciding and recording calls.
pub(crate) struct Governance {
    pub(crate) policy: Box<dyn Policy>,
    pub(crate) approver: Option<(String, Box<dyn Approver>)>,
    /// The lowest role that may decide pending calls (and then only of tools it may see).
    pub(crate) approver_rank: Option<usize>,
    pub(crate) pending: Arc<dyn PendingStore>,
    pub(crate) signer: TicketSigner,
    pub(crate) limits: RateLimits,
    /// Budgets: the tool-call budgets are a step of the path, the others the agent's.
    pub(crate) budgets: crate::budget::Budgets,
    pub(crate) max_batch: Option<usize>,
    pub(crate) sinks: Vec<Arc<dyn AuditSink>>,
    /// Where records are kept to be read back; `None` keeps none.
    pub(crate) audit: Option<Arc<dyn AuditStore>>,
    /// The same store when it is the default in-memory history, which takes records as the
    /// call path holds them.
    pub(crate) history: Option<Arc<MemoryAuditStore>>,
    pub(crate) audit_mode: AuditMode,
    /// Standing "always" grants.
    pub(crate) grants: Arc<dyn GrantStore>,
    /// Where calls report what happens to them.
    pub(crate) events: EventBus,
    /// The application's own stages.
    pub(crate) stages: Stages,
    /// What sees each call's record as it ends (the telemetry), if anything.
    pub(crate) record_watcher: Option<Box<dyn crate::audit::RecordWatcher>>,
    /// The Cedar rules, which also decide who may decide a waiting call.
    #[cfg(feature = "cedar")]
    pub(crate) cedar: Option<Arc<crate::cedar::CedarRules>>,
    /// Whether a tool may be run in place, its arguments read and its call authorized in
    /// the same step: only when no step between the read and the run may wait (asked of the
    /// steps once, at build: [`steps_that_wait`](Self::steps_that_wait)).
    pub(crate) runs_in_place: bool,
    /// Whether records are kept anywhere (asked once, at build: [`audits`](Self::audits)
    /// is asked several times on every call's path).
    pub(crate) keeps_records: bool,
}

impl Governance {
    /// Asks each step of the path between a call's read and its run whether it may wait: a
    /// rate limit (its store may be a database), the record written before the run.
    pub(crate) fn steps_that_wait(&self) -> Box<[&'static str]> {
        let steps = [
            ("rate limits", !self.limits.is_empty()),
            ("budgets", self.budgets.counts_calls()),
            ("the record before the run", self.records_before_run()),
        ];
        let waiting = steps.into_iter().filter(|(_, waits)| *waits);
        waiting.map(|(step, _)| step).collect()
    }

    /// Whether records are kept anywhere (if not, none is built).
    #[inline]
    pub(crate) fn audits(&self) -> bool {
        self.keeps_records
    }

    /// Whether records are kept anywhere: by a sink, a store, or a watcher that reads the
    /// arguments.
    pub(crate) fn records_anywhere(&self) -> bool {
        let watched = self.record_watcher.as_ref();
        !self.sinks.is_empty()
            || self.audit.is_some()
            || watched.is_some_and(|w| w.reads_arguments())
    }

    /// Whether a call's record may be written after it ends, its outcome waiting for that
    /// (a sink, or a store other than the default history, which keeps records at once).
    pub(crate) fn records_may_wait(&self) -> bool {
        !self.sinks.is_empty() || (self.audit.is_some() && self.history.is_none())
    }

    /// Whether each call is recorded before it runs ([`AuditMode::BeforeRun`]).
    pub(crate) fn records_before_run(&self) -> bool {
        self.audit.is_some() && self.audit_mode == AuditMode::BeforeRun
    }

    /// The rank of `caller` if it holds the approver role (at or above it), else `None`.
    /// A caller whose id no store could keep decides nothing.
    pub(crate) fn approver_rank_of(&self, config: &Config, caller: &Caller) -> Option<usize> {
        if !caller.id_is_storable() {
            return None;
        }
        let rank = config.roles.rank(caller.role())?;
        (rank >= self.approver_rank?).then_some(rank)
    }

    /// Whether `approver` may see and decide a pending call of `entry`: it holds the
    /// approver role, and the tool is at or below its own role.
    pub(crate) fn may_decide(&self, config: &Config, approver: &Caller, entry: &Entry) -> bool {
        self.approver_rank_of(config, approver)
            .is_some_and(|rank| entry.rank <= rank)
    }

    /// [`may_decide`](Self::may_decide) `requester`'s waiting call of `entry`'s tool with
    /// `arguments`, as the rules also say (their `approve` action).
    pub(crate) fn may_decide_call(
        &self,
        config: &Config,
        approver: &Caller,
        entry: &Entry,
        (requester, arguments): (&Caller, &serde_json::Value),
    ) -> bool {
        if !self.may_decide(config, approver, entry) {
            return false;
        }
        #[cfg(feature = "cedar")]
        if let Some(rules) = &self.cedar {
            let tool = &entry.definition.name;
            return rules.may_approve(approver, requester, tool, arguments);
        }
        let _ = (requester, arguments);
        true
    }
}
