//! One audit record per call (also unknown, refused, invalid and denied ones), written to
//! sinks: `tracing` events, an append-only hash-chained JSON Lines file, or your own.

mod chain;
mod jsonl;
mod kept;
mod memory;
mod readers;
mod ring;
mod store;
mod usage;
mod verify;
mod watch;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "postgres")]
pub(crate) use chain::unlinked;
pub use chain::{ChainBreak, VerifiedChain};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use chain::{ChainChecker, GENESIS};
#[cfg(feature = "sqlite")]
pub(crate) use chain::{Link, link};
pub use jsonl::JsonlFileSink;
pub(crate) use kept::{CallArguments, Facts, Names, ReadBack, Reader};
pub use memory::MemoryAuditStore;
pub use store::AuditStore;
pub(crate) use usage::Tally;
pub use usage::{Approvals, UsageFigures, UsageReport};
pub use verify::{LogProblem, VerifiedLog, verify_log};
pub(crate) use watch::{Ended, RecordWatcher};

/// A plain record of `caller` for the history's tests.
#[cfg(test)]
pub(crate) fn test_record(caller: &str, call_id: &str) -> AuditRecord {
    AuditRecord {
        time_ms: 0,
        caller: caller.into(),
        issuer: None,
        role: "staff".into(),
        tool: "add".into(),
        call_id: call_id.into(),
        arguments: serde_json::json!({}),
        decision: "allow".into(),
        approver: None,
        outcome: "ok".into(),
        duration_ms: 0.0,
    }
}

/// Shown instead of a secret argument's value.
pub const REDACTED: &str = "[redacted]";

/// What happened to one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When the call ended, milliseconds since the Unix epoch. The wall clock is read at
    /// most once a second and carried forward by the monotonic clock in between, so a step
    /// of the system clock shows in records within a second.
    pub time_ms: u64,
    /// The caller's id.
    pub caller: String,
    /// The issuer of the token that identified the caller, when a token did
    /// ([`identity`](crate::identity)); absent from records of other callers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The caller's role.
    pub role: String,
    /// The tool's name, as called.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The arguments, secret parameters redacted. Arguments that could not be read
    /// (malformed, over a limit, not an object) are never kept as text, which may hold a
    /// secret: `{"unreadable": true, "bytes": n, "sha256": "..."}` instead.
    pub arguments: Value,
    /// What was decided: `allow`, `require_approval`, `approved`, `approved_always`,
    /// `approved_edited`, `approval_denied`, `pending_approval`, `review_refused` (the tool
    /// refused the call before anyone was asked), `deny`, `dry_run`, or
    /// `not_reached` when the call failed before a decision (unknown tool, bad arguments);
    /// `budget_exhausted` for an agent run's model request refused by a
    /// [budget](crate::budget) (tool `(model request)`); `repeated` for an agent's call of a
    /// read-only tool answered from the same call's earlier result.
    pub decision: String,
    /// Who approved or denied, when a person did.
    pub approver: Option<String>,
    /// `ok`, or the error code.
    pub outcome: String,
    /// Time from receiving the call to its outcome.
    pub duration_ms: f64,
}

/// When a call's record is written to the [`AuditStore`], and what happens when it cannot
/// be. The registry's default
/// ([`RegistryBuilder::audit_mode`](crate::RegistryBuilder::audit_mode)) is `BeforeRun`
/// with an audit store of the application's, `AfterCall` with the in-memory history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditMode {
    /// One record per call, written when the call ends and before its answer is returned.
    /// **Loses** the record of a call whose tool ran while the store was failing: the answer
    /// still goes back (hiding the result of a tool that ran would make the model repeat
    /// it) and the failure is logged at ERROR. One write per call; an audit database that
    /// is briefly down does not stop every tool. Choose it knowingly.
    AfterCall,
    /// Also a record *before* the tool runs (outcome `"started"`), after the call is
    /// authorized: if it cannot be written, the call does not run (`store_unavailable`), so
    /// every call that ran has at least its `started` record. Two writes per executed call.
    BeforeRun,
}

/// Receives every audit record. Called on the calling task: keep it quick, or hand records
/// to a channel.
pub trait AuditSink: Send + Sync + 'static {
    /// Takes one record.
    fn record(&self, record: &AuditRecord);

    /// Whether the sink would do anything with a record now (asked once per call). A call
    /// whose sinks all say no is not made into an [`AuditRecord`] for them, which saves
    /// copying its strings and arguments; its record still goes to the registry's store.
    /// The default is `true`; [`TracingSink`] says `false` when no subscriber listens.
    fn wants_records(&self) -> bool {
        true
    }
}

/// A shared sink, e.g. one audit file for the registries of the HTTP and MCP endpoints.
impl<S: AuditSink + ?Sized> AuditSink for std::sync::Arc<S> {
    fn record(&self, record: &AuditRecord) {
        (**self).record(record);
    }

    fn wants_records(&self) -> bool {
        (**self).wants_records()
    }
}

/// Emits each record as a `tracing` event (target `toolgate::audit`, level INFO).
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingSink;

impl AuditSink for TracingSink {
    fn record(&self, record: &AuditRecord) {
        tracing::info!(
            target: "toolgate::audit",
            caller = %record.caller,
            issuer = record.issuer.as_deref().unwrap_or(""),
            role = %record.role,
            tool = %record.tool,
            call_id = %record.call_id,
            arguments = %record.arguments,
            decision = %record.decision,
            approver = record.approver.as_deref().unwrap_or(""),
            outcome = %record.outcome,
            duration_ms = record.duration_ms,
            "tool call"
        );
    }

    fn wants_records(&self) -> bool {
        tracing::enabled!(target: "toolgate::audit", tracing::Level::INFO)
    }
}

/// A copy of the arguments with the named top-level ones redacted.
pub(crate) fn redact(arguments: &Value, secrets: &[String]) -> Value {
    let mut arguments = arguments.clone();
    redact_in_place(&mut arguments, secrets);
    arguments
}

/// Redacts the named top-level arguments.
pub(crate) fn redact_in_place(arguments: &mut Value, secrets: &[String]) {
    if let Value::Object(map) = arguments {
        for secret in secrets {
            if let Some(value) = map.get_mut(secret) {
                *value = Value::String(REDACTED.to_owned());
            }
        }
    }
}

/// Arguments someone saw with secrets redacted and edited (an approver, a stage): a secret
/// they left as [`REDACTED`] keeps its real value from `original`.
pub(crate) fn unredacted(mut edited: Value, original: &Value, secrets: &[String]) -> Value {
    if let Value::Object(map) = &mut edited {
        for secret in secrets {
            let untouched = map.get(secret).and_then(Value::as_str) == Some(REDACTED);
            if let (true, Some(real)) = (untouched, original.get(secret)) {
                map.insert(secret.clone(), real.clone());
            }
        }
    }
    edited
}
