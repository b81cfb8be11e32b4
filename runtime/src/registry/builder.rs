//! Configuring and building a [`Registry`].

use std::sync::Arc;

use crate::registry::stages::Stages;
use crate::stage::{CallStage, CallWrapper, ListingStage, ResultStage};
use std::time::Duration;

use crate::approval::{
    Approver, GrantStore, MemoryGrantStore, MemoryPendingStore, PendingStore, TicketSigner,
};
use crate::arguments::ArgumentLimits;
use crate::audit::{AuditMode, AuditSink, AuditStore, MemoryAuditStore};
use crate::context::StateMap;
use crate::definition::ToolDefinition;
use crate::events::EventBus;
use crate::formats::Provider;
use crate::policy::{DefaultPolicy, Policy, PolicyMode};
use crate::rate_limits::{RateLimit, RateLimitStore, RateLimits};
use crate::registry::Governance;
use crate::registry::batch::BatchMode;
use crate::registry::problems::{BuildError, BuildProblem};
use crate::registry::snapshot::{Candidate, Handler, Snapshot};
use crate::registry::{Config, Registry};
use crate::roles::Roles;
use crate::search::{Bm25Index, Scorer, SearchIndex};
use crate::static_tool::linked_tools;
use crate::tool::Tool;

/// Which linked `#[tool]` functions to include.
type LinkedFilter = Box<dyn Fn(&ToolDefinition) -> bool + Send + Sync>;

/// Configures a [`Registry`]; start with [`Registry::builder`].
///
/// ```rust,standalone_crate
/// use std::time::Duration;
/// use toolgate::Registry;
///
/// struct Database;
///
/// let registry = Registry::builder()
///     .roles(["public", "customer", "staff", "admin"])
///     .state(Database)
///     .default_timeout(Duration::from_secs(10))
///     .build()
///     .expect("every tool's permission is a configured role");
/// # let _ = registry;
/// ```
pub struct RegistryBuilder {
    roles: Roles,
    states: StateMap,
    tools: Vec<Arc<dyn Tool>>,
    include_linked: bool,
    linked_filter: Option<LinkedFilter>,
    default_timeout: Option<Duration>,
    limits: ArgumentLimits,
    result_limits: crate::ResultLimits,
    max_concurrency: usize,
    batch_mode: BatchMode,
    reveal_hidden: bool,
    providers: Vec<Provider>,
    policy: Box<dyn Policy>,
    approver: Option<(String, Box<dyn Approver>)>,
    approver_role: Option<String>,
    pending: Arc<dyn PendingStore>,
    approval_key: Option<Vec<u8>>,
    ticket_lifetime: Duration,
    rate_limits: RateLimits,
    budgets: crate::budget::Budgets,
    max_batch: Option<usize>,
    sinks: Vec<Arc<dyn AuditSink>>,
    history_capacity: usize,
    audit_store: Option<Arc<dyn AuditStore>>,
    audit_mode: Option<AuditMode>,
    grants: Arc<dyn GrantStore>,
    event_log: Option<Arc<dyn crate::events::EventLog>>,
    expected_tools: Vec<String>,
    expected_groups: Vec<String>,
    scorer: Option<Box<dyn Scorer>>,
    suggestion_threshold: f64,
    stages: Stages,
    #[cfg(feature = "cedar")]
    cedar: Option<crate::cedar::CedarPolicies>,
    #[cfg(feature = "otel")]
    telemetry: Option<crate::telemetry::Telemetry>,
}

/// The least [relevance](crate::search::Scored::relevance) a tool needs to be suggested, by
/// default: chosen with `search_eval` (see the README for what it costs in missed tools and
/// wrong suggestions).
pub const DEFAULT_SUGGESTION_THRESHOLD: f64 = 0.3;

impl Default for RegistryBuilder {
    fn default() -> Self {
        RegistryBuilder {
            roles: Roles::default(),
            states: StateMap::default(),
            tools: Vec::new(),
            include_linked: true,
            linked_filter: None,
            default_timeout: Some(Duration::from_secs(60)),
            limits: ArgumentLimits::default(),
            result_limits: crate::ResultLimits::default(),
            max_concurrency: 16,
            batch_mode: BatchMode::default(),
            reveal_hidden: false,
            providers: Vec::new(),
            policy: Box::new(DefaultPolicy::default()),
            approver: None,
            approver_role: None,
            pending: Arc::new(MemoryPendingStore::default()),
            approval_key: None,
            ticket_lifetime: Duration::from_secs(15 * 60),
            rate_limits: RateLimits::default(),
            budgets: crate::budget::Budgets::default(),
            max_batch: None,
            sinks: Vec::new(),
            history_capacity: 1000,
            audit_store: None,
            audit_mode: None,
            grants: Arc::new(MemoryGrantStore::default()),
            event_log: None,
            expected_tools: Vec::new(),
            expected_groups: Vec::new(),
            scorer: None,
            suggestion_threshold: DEFAULT_SUGGESTION_THRESHOLD,
            stages: Stages::default(),
            #[cfg(feature = "cedar")]
            cedar: None,
            #[cfg(feature = "otel")]
            telemetry: None,
        }
    }
}

impl RegistryBuilder {
    /// The role hierarchy, lowest first: a caller may use the tools of its role and of
    /// every role below it.
    pub fn roles<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.roles = Roles::new(names);
        self
    }

    /// Application state, given to tools that take `#[ctx] name: State<T>`. One value per type.
    pub fn state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.shared_state(Arc::new(value))
    }

    /// Like [`state`](Self::state), for a value already in an `Arc`.
    pub fn shared_state<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.states.insert(value);
        self
    }

    /// Adds a tool defined at run time.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Whether to include the `#[tool]` functions linked into the program (default: yes).
    pub fn linked_tools(mut self, include: bool) -> Self {
        self.include_linked = include;
        self
    }

    /// Includes only the linked `#[tool]` functions for which `keep` is true, e.g. one group.
    ///
    /// ```
    /// let registry = toolgate::Registry::builder()
    ///     .roles(["public"])
    ///     .filter_linked(|tool| tool.group.as_deref() == Some("clinic"))
    ///     .build();
    /// # let _ = registry;
    /// ```
    pub fn filter_linked(
        mut self,
        keep: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.linked_filter = Some(Box::new(keep));
        self
    }

    /// Time limit for tools that set none with `timeout = ".."` (default: 60 s).
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }

    /// Lets tools without their own `timeout` run without a time limit.
    pub fn no_default_timeout(mut self) -> Self {
        self.default_timeout = None;
        self
    }

    /// Size and depth limits on arguments (default: 1 MiB, 64 levels).
    pub fn argument_limits(mut self, limits: ArgumentLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Bounds on a content result, whatever its blocks (default: 256 blocks, 1 MiB of text,
    /// 16 MiB of media): what does not fit is left out, with a closing note saying what, in
    /// what every front end sends (HTTP, MCP, an agent's model, the audit record).
    pub fn result_limits(mut self, limits: crate::ResultLimits) -> Self {
        self.result_limits = limits;
        self
    }

    /// How many calls of a batch may run at once (default: 16; at least 1).
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = limit.max(1);
        self
    }

    /// How a batch orders its calls (default: [`BatchMode::ReadOnlyParallel`]).
    pub fn batch_mode(mut self, mode: BatchMode) -> Self {
        self.batch_mode = mode;
        self
    }

    /// Tell callers that a tool exists but is above their role, instead of answering as
    /// for an unknown tool (default: hidden tools are indistinguishable from unknown ones).
    pub fn reveal_hidden_tools(mut self, reveal: bool) -> Self {
        self.reveal_hidden = reveal;
        self
    }

    /// Requires every tool to be usable with these providers as is (e.g. OpenAI strict mode):
    /// `build()` (and run-time registration) fails for any that is not, listing each reason
    /// with its JSON path. Without this, an incompatible tool is exported in the provider's
    /// lenient form instead.
    pub fn require_compatible(mut self, providers: impl IntoIterator<Item = Provider>) -> Self {
        self.providers.extend(providers);
        self
    }

    /// Decides per call whether it may run (default: [`DefaultPolicy`] in
    /// [`PolicyMode::Prompt`]).
    pub fn policy(mut self, policy: impl Policy) -> Self {
        self.policy = Box::new(policy);
        self
    }

    /// The default policy in a mode: `Auto` (everything runs), `Prompt` (destructive and
    /// high-risk tools need approval), `Deny` (they are refused).
    pub fn policy_mode(self, mode: PolicyMode) -> Self {
        self.policy(DefaultPolicy { mode })
    }

    /// Asks this approver, in process, about calls that need approval. Without one, such
    /// calls are not run: their outcome carries a ticket to [`Registry::approve`] later.
    pub fn approver(mut self, name: impl Into<String>, approver: impl Approver) -> Self {
        self.approver = Some((name.into(), Box::new(approver)));
        self
    }

    /// The lowest role that may list, approve and deny calls waiting with a ticket
    /// ([`Registry::pending_approvals`], [`Registry::approve`], [`Registry::deny`]); each
    /// approver still decides only calls of tools at or below its own role. Default: the
    /// highest configured role.
    pub fn approver_role(mut self, role: impl Into<String>) -> Self {
        self.approver_role = Some(role.into());
        self
    }

    /// Where calls waiting for approval are kept (default: in memory).
    pub fn pending_store(mut self, store: impl PendingStore) -> Self {
        self.pending = Arc::new(store);
        self
    }

    /// Where "always" grants are kept (default: in memory, forgotten when the process ends).
    pub fn grant_store(mut self, store: impl GrantStore) -> Self {
        self.grants = Arc::new(store);
        self
    }

    /// Where rate-limit budgets are kept (default: in memory, per process). A database store
    /// makes one budget hold across every instance that shares it.
    pub fn rate_limit_store(mut self, store: impl RateLimitStore) -> Self {
        self.rate_limits.store = Arc::new(store);
        self
    }

    /// Where audit records are kept for [`Registry::history`] and
    /// [`Registry::verify_audit`] (default: the last
    /// [`history_capacity`](Self::history_capacity) records, in memory).
    pub fn audit_store(mut self, store: impl AuditStore) -> Self {
        self.audit_store = Some(Arc::new(store));
        self
    }

    /// When a call's record is written to the audit store. The default depends on the
    /// store: with an [`audit_store`](Self::audit_store) of the application's (one that can
    /// fail), [`AuditMode::BeforeRun`], so no call runs unrecorded; with the in-memory
    /// history (which cannot fail), [`AuditMode::AfterCall`]. Choosing `AfterCall` with a
    /// store of one's own accepts losing the record of a call that ran while the store was
    /// down (see there).
    pub fn audit_mode(mut self, mode: AuditMode) -> Self {
        self.audit_mode = Some(mode);
        self
    }

    /// Keeps calls' state in these stores, shared (what
    /// [`stores`](Self::stores) takes apart).
    pub(crate) fn shared_stores(
        mut self,
        (pending, grants): (Arc<dyn PendingStore>, Arc<dyn GrantStore>),
        (rate_limits, budgets): (Arc<dyn RateLimitStore>, Arc<dyn crate::budget::BudgetStore>),
        audit: Arc<dyn AuditStore>,
    ) -> Self {
        self.pending = pending;
        self.grants = grants;
        self.rate_limits.store = rate_limits;
        self.budgets.store = budgets;
        self.audit_store = Some(audit);
        self
    }

    /// Shares the events people act on with the other instances through `log` (see
    /// [`crate::events`]).
    pub(crate) fn event_log(mut self, log: Option<Arc<dyn crate::events::EventLog>>) -> Self {
        self.event_log = log;
        self
    }

    /// The secret that signs approval tickets. Give every process that redeems tickets the
    /// same key; without one, a random key is made and tickets die with the process.
    pub fn approval_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.approval_key = Some(key.into());
        self
    }

    /// How long an approval ticket stays valid (default: 15 minutes).
    pub fn ticket_lifetime(mut self, lifetime: Duration) -> Self {
        self.ticket_lifetime = lifetime;
        self
    }

    /// Limits how fast each caller may make calls (of any tool).
    pub fn rate_limit_per_caller(mut self, limit: RateLimit) -> Self {
        self.rate_limits.set_per_caller(limit);
        self
    }

    /// Limits how often one tool may be called (by all callers together).
    pub fn rate_limit_tool(mut self, tool: impl Into<String>, limit: RateLimit) -> Self {
        self.rate_limits.set_per_tool(tool.into(), limit);
        self
    }

    /// Adds a budget: a ceiling on tokens, money or tool calls per agent run or per caller
    /// per period (see [`budget`](crate::budget)). Tool-call budgets count every call that
    /// runs, from any front; the others count the agent loop's model requests.
    pub fn budget(mut self, budget: crate::budget::Budget) -> Self {
        self.budgets.add(budget);
        self
    }

    /// The models' prices, for [cost budgets](crate::budget::Budget::cost).
    pub fn prices(mut self, prices: crate::budget::Prices) -> Self {
        self.budgets.prices = prices;
        self
    }

    /// Where budgets' counts are kept (default: in memory, per process). A database store
    /// makes one count hold across every instance that shares it.
    pub fn budget_store(mut self, store: impl crate::budget::BudgetStore) -> Self {
        self.budgets.store = Arc::new(store);
        self
    }

    /// The most calls one batch may hold; a larger batch runs none (each gets
    /// `batch_too_large`). Default: no limit.
    pub fn max_batch_size(mut self, max: usize) -> Self {
        self.max_batch = Some(max);
        self
    }

    /// Also sends every audit record to this sink (e.g. [`TracingSink`](crate::audit::TracingSink),
    /// [`JsonlFileSink`](crate::audit::JsonlFileSink)).
    pub fn audit_sink(mut self, sink: impl AuditSink) -> Self {
        self.sinks.push(Arc::new(sink));
        self
    }

    /// How many recent calls [`Registry::history`] keeps in memory when no
    /// [`audit_store`](Self::audit_store) is given (default: 1,000; 0 keeps none). Threads
    /// that run calls keep their records apart, so that they never wait for each other:
    /// memory holds up to one such history per core, at most 8 (see [`MemoryAuditStore`]).
    pub fn history_capacity(mut self, capacity: usize) -> Self {
        self.history_capacity = capacity;
        self
    }

    /// Tools that must be in the registry: `build()` fails naming each one missing. The
    /// linker drops a crate nothing refers to, and its `#[tool]` functions with it; saying
    /// what you expect turns that silence into an error.
    ///
    /// ```rust,standalone_crate
    /// let error = toolgate::Registry::builder()
    ///     .roles(["public"])
    ///     .expect_tools(["read_file"])
    ///     .build()
    ///     .unwrap_err();
    /// assert!(error.to_string().contains("`read_file`"));
    /// ```
    pub fn expect_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.expected_tools
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Groups that must hold at least one tool: `build()` fails naming each empty one.
    pub fn expect_groups<I, S>(mut self, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.expected_groups
            .extend(groups.into_iter().map(Into::into));
        self
    }

    /// Ranks tools for [`Registry::search`] with `scorer` instead of the built-in
    /// [`Bm25Index`] (e.g. with embeddings, or a blend of both).
    pub fn search_scorer(mut self, scorer: impl Scorer) -> Self {
        self.scorer = Some(Box::new(scorer));
        self
    }

    /// The least [relevance](crate::search::Scored::relevance), from 0 to 1, of a tool that
    /// [`Registry::suggest`] offers (default [`DEFAULT_SUGGESTION_THRESHOLD`]).
    pub fn suggestion_threshold(mut self, threshold: f64) -> Self {
        self.suggestion_threshold = threshold.clamp(0.0, 1.0);
        self
    }

    /// Adds a step before calls are authorized, after the stages added before it and
    /// before the policy: it may refuse a call, require approval or rewrite the arguments
    /// (see [`stage`](crate::stage)).
    pub fn call_stage(mut self, stage: impl CallStage) -> Self {
        self.stages.add_call(Box::new(stage));
        self
    }

    /// Adds a step after a tool ran, after the stages added before it: it may look at,
    /// redact or replace the result before the model, the record and the events see it
    /// (see [`stage`](crate::stage)).
    pub fn result_stage(mut self, stage: impl ResultStage) -> Self {
        self.stages.add_result(Box::new(stage));
        self
    }

    /// Wraps every call, inside the wrappers added before it: for spans and timing (see
    /// [`stage`](crate::stage)). Wrapped calls are futures of their own.
    pub fn wrap_calls(mut self, wrapper: impl CallWrapper) -> Self {
        self.stages.add_wrapper(Box::new(wrapper));
        self
    }

    /// Adds a stage that may hide tools from callers, in every list and every call (see
    /// [`stage`](crate::stage)). Lists are then made for each caller, not kept per role.
    pub fn listing_stage(mut self, stage: impl ListingStage) -> Self {
        self.stages.add_listing(Box::new(stage));
        self
    }

    /// Decides calls, listings and approvals with Cedar rules too (feature `cedar`; see
    /// [`cedar`](crate::cedar)): checked against the tools' schemas by
    /// [`build`](Self::build), they run after every call stage, on the arguments as they will
    /// run, and hide from each caller the tools no rule lets it see.
    #[cfg(feature = "cedar")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cedar")))]
    pub fn cedar(mut self, policies: crate::cedar::CedarPolicies) -> Self {
        self.cedar = Some(policies);
        self
    }

    /// Makes a span of every call, on every path, and records metrics (feature `otel`; see
    /// [`telemetry`](crate::telemetry)). The span is the outermost wrapper of each call;
    /// the HTTP router, the MCP server and the agent loop of the registry make their spans
    /// around it.
    #[cfg(feature = "otel")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
    pub fn telemetry(mut self, telemetry: crate::telemetry::Telemetry) -> Self {
        use crate::telemetry::{SecretsSeen, ToolSpans};
        let shared = Arc::clone(telemetry.shared());
        self.stages
            .add_outer_wrapper(Box::new(ToolSpans(Arc::clone(&shared))));
        if shared.capture.content {
            self.stages.add_first_call(Box::new(SecretsSeen));
        }
        self.telemetry = Some(telemetry);
        self
    }

    /// Collects the tools and checks them all: every permission names a configured role,
    /// names are unique, every `State<T>` a tool takes was provided, every input schema
    /// compiles with an object root. All problems are reported together.
    pub fn build(mut self) -> Result<Registry, BuildError> {
        let mut candidates = self.linked_candidates();
        candidates.extend(
            std::mem::take(&mut self.tools)
                .into_iter()
                .map(Candidate::dynamic),
        );
        let (expected_tools, expected_groups) = (
            std::mem::take(&mut self.expected_tools),
            std::mem::take(&mut self.expected_groups),
        );
        #[cfg(feature = "cedar")]
        let cedar = self.cedar.take();
        let links_tools = self.include_linked;
        #[allow(unused_mut)]
        let mut config = self.into_config()?;
        let snapshot =
            Snapshot::assemble(&config.rules(), Vec::new(), candidates).map_err(BuildError::new)?;
        #[cfg(feature = "cedar")]
        if let Some(policies) = cedar {
            config
                .governance
                .decide_with_rules(policies, &config.roles, &snapshot)?;
        }
        let missing = missing_expected(&snapshot, &expected_tools, &expected_groups);
        if !missing.is_empty() {
            return Err(BuildError::new(missing));
        }
        let limits = config.governance.limits.limited_tools();
        for tool in limits.filter(|tool| snapshot.any(tool).is_none()) {
            // It may be registered later (tool files, imports): a warning, not a problem.
            tracing::warn!(%tool, "a rate limit names no tool the registry has now; it limits nothing until a tool of that name (or spelled so by a provider) is registered");
        }
        // Without linked tools, an empty registry is one whose tools come at run time.
        if snapshot.entries().is_empty() && links_tools {
            tracing::warn!(
                "the tool registry is empty: no #[tool] function was linked and no tool was added. \
                 If your tools live in another crate, reference it (`use my_tools as _;`) so the linker keeps them."
            );
        }
        // Here, not in the first call: calibrating the call clock takes a fraction of a
        // millisecond.
        crate::util::time::calibrate();
        Ok(Registry::from_parts(config, snapshot))
    }

    /// The `#[tool]` functions linked into the program that the filter keeps.
    fn linked_candidates(&self) -> Vec<Candidate> {
        if !self.include_linked {
            return Vec::new();
        }
        linked_tools()
            .filter_map(|linked| {
                let definition = linked.definition();
                let keep = self
                    .linked_filter
                    .as_ref()
                    .is_none_or(|keep| keep(&definition));
                keep.then(|| Candidate {
                    definition,
                    handler: Handler::Static(linked),
                    requirements: (linked.requirements)(),
                })
            })
            .collect()
    }

    fn into_config(self) -> Result<Config, BuildError> {
        let events = self.event_bus();
        let record_watcher = self.record_watcher();
        let approver_rank = match &self.approver_role {
            Some(role) => Some(self.roles.rank(role).ok_or_else(|| {
                BuildError::new(vec![BuildProblem::UnknownApproverRole {
                    role: role.clone(),
                    known_roles: self.roles.names().to_vec(),
                }])
            })?),
            None => self.roles.names().len().checked_sub(1),
        };
        // The default history is kept without building a full record per call.
        let history = match (&self.audit_store, self.history_capacity) {
            (None, capacity) if capacity > 0 => Some(Arc::new(MemoryAuditStore::new(capacity))),
            _ => None,
        };
        // A store of the application's can fail: by default nothing runs unrecorded.
        let audit_mode = self.audit_mode.unwrap_or(match self.audit_store {
            Some(_) => AuditMode::BeforeRun,
            None => AuditMode::AfterCall,
        });
        let audit = self.audit_store.or_else(|| {
            history
                .clone()
                .map(|history| history as Arc<dyn AuditStore>)
        });
        Ok(Config {
            #[cfg(feature = "otel")]
            telemetry: self.telemetry,
            roles: self.roles,
            states: Arc::new(self.states),
            default_timeout: self.default_timeout,
            limits: self.limits,
            result_limits: self.result_limits,
            max_concurrency: self.max_concurrency,
            batch_mode: self.batch_mode,
            reveal_hidden: self.reveal_hidden,
            providers: self.providers,
            search: SearchIndex::new(
                self.scorer
                    .unwrap_or_else(|| Box::new(Bm25Index::default())),
            ),
            suggestion_threshold: self.suggestion_threshold,
            governance: Governance {
                runs_in_place: false,
                keeps_records: false,
                policy: self.policy,
                approver: self.approver,
                approver_rank,
                pending: self.pending,
                signer: TicketSigner::new(self.approval_key, self.ticket_lifetime),
                limits: self.rate_limits,
                budgets: self.budgets,
                max_batch: self.max_batch,
                sinks: self.sinks,
                audit,
                history,
                audit_mode,
                grants: self.grants,
                events,
                record_watcher,
                stages: self.stages,
                #[cfg(feature = "cedar")]
                cedar: None,
            },
        })
        .map(|mut config: Config| {
            let waiting = config.governance.steps_that_wait();
            config.governance.runs_in_place = waiting.is_empty();
            config.governance.keeps_records = config.governance.records_anywhere();
            if !waiting.is_empty() {
                let steps = waiting.join(", ");
                tracing::debug!(%steps, "no tool runs in place: these steps may wait before a tool runs");
            }
            config
        })
    }
}

impl RegistryBuilder {
    /// What sees each call's record as it ends: the registry's telemetry, if it has one.
    fn record_watcher(&self) -> Option<Box<dyn crate::audit::RecordWatcher>> {
        #[cfg(feature = "otel")]
        if let Some(telemetry) = &self.telemetry {
            let shared = Arc::clone(telemetry.shared());
            return Some(Box::new(crate::telemetry::Facts(shared)));
        }
        None
    }

    /// The registry's event channel, watched by its telemetry if it has one, shared with
    /// the other instances if the stores are.
    fn event_bus(&self) -> EventBus {
        #[cfg(feature = "otel")]
        let watcher = self
            .telemetry
            .as_ref()
            .map(|telemetry| crate::telemetry::watcher(Arc::clone(telemetry.shared())));
        #[cfg(not(feature = "otel"))]
        let watcher = None;
        EventBus::new(watcher, self.event_log.clone())
    }
}

/// What the application expects but the registry lacks.
fn missing_expected(snapshot: &Snapshot, tools: &[String], groups: &[String]) -> Vec<BuildProblem> {
    let mut problems = Vec::new();
    let names: Vec<String> = tools
        .iter()
        .filter(|name| snapshot.any(name).is_none())
        .cloned()
        .collect();
    if !names.is_empty() {
        problems.push(BuildProblem::MissingTools { names });
    }
    let groups: Vec<String> = groups
        .iter()
        .filter(|group| {
            !snapshot
                .entries()
                .iter()
                .any(|entry| entry.definition.group.as_deref() == Some(group.as_str()))
        })
        .cloned()
        .collect();
    if !groups.is_empty() {
        problems.push(BuildProblem::MissingGroups { groups });
    }
    problems
}
