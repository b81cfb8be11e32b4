//! The registry: which tools exist, who may see them, and running calls.

mod answer;
#[cfg(feature = "axum")]
pub(crate) use answer::Answer;
pub(crate) use answer::Ending;
mod approve;
mod authorize;
mod batch;
mod builder;
mod calling;
mod cancel;
#[cfg(feature = "cedar")]
mod cedar;
mod checked;
mod checked_arguments;
mod config;
mod confirm;
mod contain;
mod decide;
mod find;
mod go_on;
mod path;
mod perform;
mod problems;
mod proof;
mod record;
mod resume;
mod review;
mod run;
mod search;
mod snapshot;
mod stages;
mod tickets;
mod usage;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use serde_json::Value;
use tokio::sync::watch;

pub use batch::{BatchMode, BatchOptions, CallOptions};
pub use builder::{DEFAULT_SUGGESTION_THRESHOLD, RegistryBuilder};
pub use problems::{BuildError, BuildProblem};

use crate::approval::{Grant, PendingCall, TicketError};
use crate::audit::{AuditRecord, AuditStore, ChainBreak, VerifiedChain};
use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::definition::ToolDefinition;
use crate::formats::Format;
use crate::front::FrontEnd;
use crate::roles::Roles;
use crate::store_error::StoreError;
use crate::tool::Tool;
use crate::util::sync::lock;
use calling::{Calling, Options, Single};
use resume::{Resolution, resume};
use run::{ClientSide, Run};
pub(crate) use snapshot::Snapshot;
use snapshot::{CallerView, Candidate};

pub(crate) use config::{Config, Governance};
pub(crate) use record::{LoopRecord, MODEL_REQUEST};

/// The tools a caller may see, in name order. Cheap to clone.
pub type ToolList = Arc<[Arc<ToolDefinition>]>;

struct Inner {
    config: Arc<Config>,
    snapshot: ArcSwap<Snapshot>,
    /// Serializes run-time changes so none is lost.
    changing: Mutex<()>,
    version: watch::Sender<u64>,
}

/// All tools of an application, filtered by role, validated and run safely.
///
/// Cheap to clone (an `Arc` inside); share one across the application.
///
/// ```rust,standalone_crate
/// use toolgate::prelude::*;
///
/// /// Add two numbers.
/// #[tool(permission = "public", read_only)]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let registry = Registry::builder().roles(["public", "staff"]).build().unwrap();
/// let caller = Caller::new("user-1", "public");
/// assert!(registry.visible_to(&caller).iter().any(|tool| tool.name == "add"));
///
/// let outcome = registry.call(&caller, ToolCall::new("1", "add", r#"{"a": 2, "b": 3}"#)).await;
/// assert_eq!(outcome.result.unwrap(), 5);
/// # }
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

/// A registry reference that does not keep it alive: for tools the registry holds that need
/// the registry (a strong one would be a cycle).
#[derive(Clone)]
pub(crate) struct WeakRegistry(std::sync::Weak<Inner>);

impl WeakRegistry {
    pub(crate) fn upgrade(&self) -> Option<Registry> {
        self.0.upgrade().map(|inner| Registry { inner })
    }
}

impl Registry {
    /// Starts configuring a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    fn from_parts(config: Config, snapshot: Snapshot) -> Self {
        search::index_all(&config, &snapshot);
        let (version, _) = watch::channel(0);
        Registry {
            inner: Arc::new(Inner {
                config: Arc::new(config),
                snapshot: ArcSwap::from_pointee(snapshot),
                changing: Mutex::new(()),
                version,
            }),
        }
    }

    /// Inlined: it is worked out on every call, and only an unknown role takes more.
    #[inline]
    fn rank(&self, caller: &Caller) -> Option<usize> {
        let rank = self.inner.config.roles.rank(caller.role());
        if rank.is_none() || !caller.id_is_storable() {
            return refused_caller(caller);
        }
        rank
    }

    pub(crate) fn downgrade(&self) -> WeakRegistry {
        WeakRegistry(Arc::downgrade(&self.inner))
    }

    /// The role hierarchy.
    pub fn roles(&self) -> &Roles {
        &self.inner.config.roles
    }

    /// Number of tools, whatever their permission.
    pub fn len(&self) -> usize {
        self.inner.snapshot.load().entries().len()
    }

    /// Whether the registry holds no tool at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The definitions of the tools `caller` may see and run. Precomputed: no work per request.
    /// A caller whose role is not configured sees nothing.
    pub fn visible_to(&self, caller: &Caller) -> ToolList {
        let snapshot = self.inner.snapshot.load();
        match self.view_of(&snapshot, caller) {
            Some(view) => Arc::clone(&view.tools),
            None => Arc::from(Vec::new()),
        }
    }

    /// [`visible_to`](Self::visible_to) as a JSON array ([`Format::Canonical`]), serialized
    /// once per role.
    pub fn visible_json(&self, caller: &Caller) -> Arc<Value> {
        self.export(caller, Format::Canonical)
    }

    /// [`visible_to`](Self::visible_to) in a provider's format, made once per role and format
    /// and then shared.
    ///
    /// ```
    /// use toolgate::Caller;
    /// use toolgate::formats::Format;
    ///
    /// let registry = toolgate::Registry::builder().roles(["public"]).build().unwrap();
    /// let tools = registry.export(&Caller::new("u", "public"), Format::OpenAiChat { strict: true });
    /// assert!(tools.is_array());
    /// ```
    pub fn export(&self, caller: &Caller, format: Format) -> Arc<Value> {
        self.export_from(&self.inner.snapshot.load(), caller, format)
    }

    /// The tools as they are now: run-time changes make new ones, and one held stays as it
    /// was (to tell later what a caller saw then).
    pub(crate) fn tools_now(&self) -> Arc<Snapshot> {
        self.inner.snapshot.load_full()
    }

    /// What governs every call: the policy, approvals and their signer, records, events.
    pub(crate) fn governance(&self) -> &Governance {
        &self.inner.config.governance
    }

    /// [`export`](Self::export) of `snapshot`'s tools.
    pub(crate) fn export_from(
        &self,
        snapshot: &Snapshot,
        caller: &Caller,
        format: Format,
    ) -> Arc<Value> {
        match self.view_of(snapshot, caller) {
            Some(view) => view.export(format),
            None => Arc::new(Value::Array(Vec::new())),
        }
    }

    /// What `caller` sees of `snapshot`.
    fn view_of<'s>(&self, snapshot: &'s Snapshot, caller: &Caller) -> Option<CallerView<'s>> {
        find::view_of(&self.inner.config, snapshot, (self.rank(caller), caller))
    }

    /// The visible tools of one group.
    pub fn visible_in_group(&self, caller: &Caller, group: &str) -> Vec<Arc<ToolDefinition>> {
        self.visible_to(caller)
            .iter()
            .filter(|tool| tool.group.as_deref() == Some(group))
            .cloned()
            .collect()
    }

    /// The groups that hold at least one tool visible to `caller`, sorted.
    pub fn groups_visible_to(&self, caller: &Caller) -> Vec<String> {
        let groups: BTreeSet<String> = self
            .visible_to(caller)
            .iter()
            .filter_map(|tool| tool.group.clone())
            .collect();
        groups.into_iter().collect()
    }

    /// One tool's definition, if `caller` may see it.
    pub fn definition(&self, caller: &Caller, name: &str) -> Option<Arc<ToolDefinition>> {
        let snapshot = self.inner.snapshot.load();
        find::seen(
            &self.inner.config,
            &snapshot,
            (self.rank(caller), caller),
            name,
        )
        .map(|entry| Arc::clone(&entry.definition))
    }

    /// Whether calls of `tool` may have their arguments read straight into its parameters
    /// (its schema proven to say no more than they do, and nothing on the path needing a
    /// value first). For the project's tests of the two ways of reading; not API.
    #[doc(hidden)]
    pub fn __reads_straight_into_parameters(&self, tool: &str) -> bool {
        let snapshot = self.inner.snapshot.load();
        let config = &self.inner.config;
        let exact = snapshot.any(tool).and_then(|entry| entry.exact.as_ref());
        exact.is_some_and(|exact| checked::reads_straight(config, exact))
    }

    /// Runs one call for `caller`: look up among the caller's tools, check the arguments
    /// against the input schema, apply rate limits and the policy (asking for approval where
    /// it says so), run with timeout and panic isolation, and audit. Always returns an outcome.
    ///
    /// The call walks its path in the future's first poll; a call no step makes wait (no
    /// rate limit, approval or record before the run, and a tool that finishes when first
    /// polled) runs to its outcome there, with no future of its own. Only what waits is
    /// boxed, and goes on from the step it waited at.
    pub fn call<'a>(
        &'a self,
        caller: &'a Caller,
        call: ToolCall,
    ) -> impl Future<Output = ToolOutcome> + Send + 'a {
        self.call_ending(caller, call, FrontEnd::Library)
    }

    /// [`call`](Self::call), ending as `E` wants: a [`ToolOutcome`]; an
    /// [`Answer`](answer::Answer) for a front end that writes the outcome out as JSON (a
    /// tool that runs in place may give its result as its value's text, written as it is);
    /// or the HTTP adapter's `IfInPlace`, made only if its tool runs in place with its
    /// arguments read straight into its parameters, else given up with nothing done or
    /// recorded (for text cut out of a request on the guess that it is one JSON object,
    /// which only a reader that reads the whole of it confirms). `front` is where the
    /// call came in.
    pub(crate) fn call_ending<'a, E: Ending + 'a>(
        &'a self,
        caller: &'a Caller,
        call: ToolCall,
        front: FrontEnd,
    ) -> impl Future<Output = E> + Send + 'a {
        Calling::new(Single::new(self, caller, call, None).from(front))
    }

    /// Like [`call`](Self::call); cancelling `cancel` ends the call with a `cancelled` error.
    pub fn call_with_cancel<'a>(
        &'a self,
        caller: &'a Caller,
        call: ToolCall,
        cancel: CancellationToken,
    ) -> impl Future<Output = ToolOutcome> + Send + 'a {
        let options = CallOptions {
            cancel: Some(cancel),
            ..CallOptions::default()
        };
        self.call_with(caller, call, options)
    }

    /// [`call`](Self::call) with options: a cancellation token, or a dry run. A call with
    /// options walks the same path as a plain call.
    pub fn call_with<'a>(
        &'a self,
        caller: &'a Caller,
        call: ToolCall,
        options: CallOptions,
    ) -> impl Future<Output = ToolOutcome> + Send + 'a {
        let options = Options::from(options);
        let options = (!options.is_plain()).then(|| Arc::new(options));
        Calling::new(Single::new(self, caller, call, options))
    }

    /// A call inside the application's wrappers.
    async fn call_wrapped(
        &self,
        caller: &Caller,
        call: ToolCall,
        options: Option<Arc<Options>>,
        front: FrontEnd,
    ) -> ToolOutcome {
        // A guard, as in a call that begins at once.
        let snapshot = self.inner.snapshot.load();
        let run = match &options {
            Some(options) => options.run(self, caller),
            None => self.run_from(caller, front),
        };
        calling::execute(&run, &snapshot, call, path::AtStart).await
    }

    /// The registry's telemetry, for the adapters' own spans.
    #[cfg(feature = "otel")]
    pub(crate) fn telemetry(&self) -> Option<&crate::telemetry::Telemetry> {
        self.inner.config.telemetry.as_ref()
    }

    /// How one call that came in through `front` runs for `caller`, without options.
    #[inline]
    pub(crate) fn run_from<'a>(&'a self, caller: &'a Caller, front: FrontEnd) -> Run<'a> {
        Run {
            config: &self.inner.config,
            rank: self.rank(caller),
            caller,
            cancel: cancel::Cancel(None),
            dry_run: false,
            run_id: None,
            front,
            client: None,
        }
    }

    /// How one call runs for `caller` (not cancellable, not a dry run, unless changed).
    fn run_for<'a>(&'a self, caller: &'a Caller, client: Option<&'a ClientSide>) -> Run<'a> {
        Run {
            client,
            ..self.run_from(caller, crate::FrontEnd::Library)
        }
    }

    /// Runs a batch with the registry's settings; see [`run_batch_with`](Self::run_batch_with).
    pub async fn run_batch(&self, caller: &Caller, calls: Vec<ToolCall>) -> Vec<ToolOutcome> {
        self.run_batch_with(caller, calls, BatchOptions::default())
            .await
    }

    /// Runs many calls: exactly one outcome per call, in call order, never a missing one.
    /// Read-only calls run concurrently (up to the concurrency limit, joined in the calling
    /// task: a tool that computes for long belongs on `spawn_blocking`, as synchronous
    /// `#[tool]` functions are); other calls run one at a time, in call order, after the
    /// calls before them (see [`BatchMode`]). A batch
    /// over [`max_batch_size`](RegistryBuilder::max_batch_size) runs nothing: every call
    /// gets a `batch_too_large` outcome.
    pub async fn run_batch_with(
        &self,
        caller: &Caller,
        calls: Vec<ToolCall>,
        options: BatchOptions,
    ) -> Vec<ToolOutcome> {
        let snapshot = self.tools_now();
        let rank = self.rank(caller);
        batch::run(&self.inner.config, &snapshot, rank, caller, calls, options).await
    }

    /// Approves a call that is waiting with a ticket, and runs it, once, as the caller who
    /// made it. `approver` must hold the approver role
    /// ([`RegistryBuilder::approver_role`]) and may decide only calls of tools at or below its
    /// own role; a call it may not decide stays waiting and is answered like a used ticket
    /// ([`TicketError::AlreadyUsed`]). `approver` is recorded in the audit trail. A forged,
    /// expired or already used ticket (also one redeemed twice at the same time) runs nothing.
    /// `ticket` is the signed ticket, or the short id of a waiting call's ticket (its
    /// `ticket_id`, as [`pending_approvals`](Self::pending_approvals) lists it).
    pub async fn approve(
        &self,
        ticket: &str,
        approver: &Caller,
    ) -> Result<ToolOutcome, TicketError> {
        let snapshot = self.tools_now();
        let pending = tickets::redeem(&self.inner.config, &snapshot, ticket, approver).await?;
        let resolution = Resolution::Approve;
        Ok(resume(&self.inner.config, &snapshot, pending, approver, resolution).await)
    }

    /// Refuses a call that is waiting with a ticket; its outcome (an `approval_denied` error
    /// with the reason) is what to send back to the model. The same rules as
    /// [`approve`](Self::approve) say who may.
    pub async fn deny(
        &self,
        ticket: &str,
        approver: &Caller,
        reason: &str,
    ) -> Result<ToolOutcome, TicketError> {
        let snapshot = self.tools_now();
        let pending = tickets::redeem(&self.inner.config, &snapshot, ticket, approver).await?;
        let resolution = Resolution::Deny { reason };
        Ok(resume(&self.inner.config, &snapshot, pending, approver, resolution).await)
    }

    /// The calls waiting for approval that `approver` may decide (see
    /// [`approve`](Self::approve)), with `#[secret]` arguments redacted. Empty for a caller
    /// without the approver role.
    pub async fn pending_approvals(
        &self,
        approver: &Caller,
    ) -> Result<Vec<PendingCall>, StoreError> {
        let snapshot = self.tools_now();
        tickets::pending_for(&self.inner.config, &snapshot, approver).await
    }

    /// What came of a call of an agent run that waited with a ticket and was decided since
    /// (approved and run, or denied), by its ticket id (`details.ticket_id` of the
    /// `approval_required` outcome). `None` while it is still waiting.
    pub async fn decided_call(
        &self,
        ticket_id: &str,
    ) -> Result<Option<crate::approval::DecidedCall>, StoreError> {
        self.inner
            .config
            .governance
            .pending
            .decided(ticket_id)
            .await
    }

    /// Ends a call of `caller`'s that waits with a ticket, unrun, because `caller` (as it
    /// presents now) may no longer see its tool: the outcome is the `unknown_tool` error
    /// that caller gets for it, and no approver can decide it any more. `None` when no such
    /// call waits (decided meanwhile, or not `caller`'s).
    pub(crate) async fn withdraw(
        &self,
        ticket_id: &str,
        caller: &Caller,
    ) -> Result<Option<ToolOutcome>, StoreError> {
        let pending = &self.governance().pending;
        let theirs = pending.get(ticket_id).await?;
        if theirs.is_none_or(|call| call.caller.id() != caller.id()) {
            return Ok(None);
        }
        let Some(call) = pending.take(ticket_id).await? else {
            return Ok(None);
        };
        let snapshot = self.tools_now();
        let resolution = Resolution::Withdraw;
        let config = &self.inner.config;
        Ok(Some(
            resume(config, &snapshot, call, caller, resolution).await,
        ))
    }

    /// Every call's and agent run's [events](crate::events), from now on; with database
    /// [stores](crate::store::Stores), also the other instances' approvals, finished calls
    /// and runs (those within about a second of the first subscription may be missed).
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<Arc<crate::events::Event>> {
        self.governance().events.subscribe()
    }

    /// Reports an event (an agent's own: model requests, run ends).
    pub(crate) fn publish(
        &self,
        make: impl FnOnce() -> (String, Option<String>, crate::events::EventKind),
    ) {
        self.governance().events.publish(make);
    }

    /// Whether `approver` may decide waiting calls of the tool `tool` (see
    /// [`approve`](Self::approve)); false for a tool that does not exist.
    pub fn may_decide(&self, approver: &Caller, tool: &str) -> bool {
        let snapshot = self.inner.snapshot.load();
        let config = &self.inner.config;
        snapshot
            .any(tool)
            .is_some_and(|entry| config.governance.may_decide(config, approver, entry))
    }

    /// Whether callers of different roles see different tools: then a tool list is private
    /// to its caller's role (MCP's `cacheScope`), else the same for everyone.
    pub fn lists_differ_by_role(&self) -> bool {
        let snapshot = self.inner.snapshot.load();
        snapshot.entries().iter().any(|entry| entry.rank > 0)
    }

    /// Whether `caller` holds the approver role
    /// ([`RegistryBuilder::approver_role`](crate::RegistryBuilder::approver_role)), so some
    /// waiting calls may be theirs to decide (which ones, [`may_decide`](Self::may_decide)
    /// says).
    pub fn is_approver(&self, caller: &Caller) -> bool {
        let config = &self.inner.config;
        config.governance.approver_rank_of(config, caller).is_some()
    }

    /// The last `count` calls of a caller (by id), newest first, from the audit store (see
    /// [`RegistryBuilder::audit_store`]; empty when records are kept nowhere).
    pub async fn history(
        &self,
        caller_id: &str,
        count: usize,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        match &self.governance().audit {
            Some(store) => store.history(caller_id, count).await,
            None => Ok(Vec::new()),
        }
    }

    /// Checks the audit store's hash chain (see [`AuditStore::verify`]): the outer error is
    /// the store's, the inner one where the chain breaks.
    pub async fn verify_audit(&self) -> Result<Result<VerifiedChain, ChainBreak>, StoreError> {
        match &self.governance().audit {
            Some(store) => store.verify().await,
            None => Ok(Ok(VerifiedChain {
                records: 0,
                last_hash: None,
            })),
        }
    }

    /// The standing "always" grants (see [`ApprovalAnswer::ApproveAlways`](crate::approval::ApprovalAnswer::ApproveAlways)).
    pub async fn grants(&self) -> Result<Vec<Grant>, StoreError> {
        self.governance().grants.list().await
    }

    /// Withdraws a standing grant: the caller's next call of the tool asks again. Whether
    /// there was one.
    pub async fn revoke_grant(&self, caller_id: &str, tool: &str) -> Result<bool, StoreError> {
        self.inner
            .config
            .governance
            .grants
            .revoke(caller_id, tool)
            .await
    }

    /// Adds a tool while the application runs; checked like at build time. Calls already
    /// running are not affected. Subscribers of [`changes`](Self::changes) are told.
    pub fn register(&self, tool: impl Tool) -> Result<(), BuildError> {
        let candidate = Candidate::dynamic(Arc::new(tool));
        self.change(|entries| (entries, vec![candidate]))
    }

    /// Removes a tool by name; returns whether it existed.
    pub fn unregister(&self, name: &str) -> bool {
        let mut found = false;
        let result = self.change(|mut entries| {
            let before = entries.len();
            entries.retain(|entry| entry.definition.name != name);
            found = entries.len() != before;
            (entries, Vec::new())
        });
        result.is_ok() && found
    }

    /// Reads the Cedar rules' files again (see [`cedar`](crate::cedar)): from now on the new
    /// set decides, or, if it does not compile against the tools, the set deciding now stays
    /// and its problems (file, line, what is wrong) are returned. Nothing happens to calls
    /// already past their rules.
    #[cfg(feature = "cedar")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cedar")))]
    pub fn reload_rules(&self) -> Result<(), Vec<crate::cedar::CedarProblem>> {
        match &self.inner.config.governance.cedar {
            Some(rules) => rules.reload(),
            None => Ok(()),
        }
    }

    /// What kept the last change of rules (a reload) or of tools from being checked by the
    /// rules; empty when the rules decide for every tool.
    #[cfg(feature = "cedar")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cedar")))]
    pub fn rule_problems(&self) -> Vec<crate::cedar::CedarProblem> {
        match &self.inner.config.governance.cedar {
            Some(rules) => rules.problems(),
            None => Vec::new(),
        }
    }

    /// A receiver whose value (a version number) changes whenever tools are added or removed
    /// at run time, e.g. to send MCP's `notifications/tools/list_changed`.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    /// Tells subscribers of [`changes`](Self::changes) that what callers see changed without
    /// a tool being added or removed (a listing stage now hides other tools).
    #[cfg(feature = "devices")]
    pub(crate) fn announce_change(&self) {
        self.inner.version.send_modify(|version| *version += 1);
    }

    fn change(
        &self,
        edit: impl FnOnce(Vec<Arc<snapshot::Entry>>) -> (Vec<Arc<snapshot::Entry>>, Vec<Candidate>),
    ) -> Result<(), BuildError> {
        let _guard = lock(&self.inner.changing);
        let current = self.tools_now();
        let (entries, candidates) = edit(current.entries().to_vec());
        let unchanged = candidates.is_empty() && entries.len() == current.entries().len();
        if unchanged {
            return Ok(());
        }
        let snapshot = Snapshot::assemble(&self.inner.config.rules(), entries, candidates)
            .map_err(BuildError::new)?;
        // The rules know a tool before any call can reach it.
        #[cfg(feature = "cedar")]
        self.inner.config.governance.follow_tools(&snapshot);
        search::index_changes(&self.inner.config, &current, &snapshot);
        self.inner.snapshot.store(Arc::new(snapshot));
        self.inner.version.send_modify(|version| *version += 1);
        Ok(())
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("roles", &self.inner.config.roles.names())
            .field("tools", &self.len())
            .finish_non_exhaustive()
    }
}

/// A caller of a role the registry does not know, or whose id no store could keep: it sees
/// no tools and runs none (kept apart from the lookup every call makes).
#[cold]
#[inline(never)]
fn refused_caller(caller: &Caller) -> Option<usize> {
    let id = caller.recorded_id();
    if caller.id_is_storable() {
        tracing::warn!(caller = %id, role = caller.role(), "caller has a role the registry does not know; it sees no tools");
    } else {
        tracing::warn!(caller = %id, "caller id holds a control character (NUL, a line break, ...), which no store can keep as it is; it is refused every tool");
    }
    None
}
