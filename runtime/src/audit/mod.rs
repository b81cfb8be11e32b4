//! One audit record per call (also unknown, refused, invalid and denied ones), written to
//! sinks: `tracing` events, an append-only hash-chained JSON Lines file, or your own.

mod history;
mod jsonl;
mod verify;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) use history::History;
pub use jsonl::JsonlFileSink;
pub use verify::{LogProblem, VerifiedLog, verify_log};

/// Shown instead of a secret argument's value.
pub const REDACTED: &str = "[redacted]";

/// What happened to one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When the call ended, milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The caller's id.
    pub caller: String,
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
    /// `not_reached` when the call failed before a decision (unknown tool, bad arguments).
    pub decision: String,
    /// Who approved or denied, when a person did.
    pub approver: Option<String>,
    /// `ok`, or the error code.
    pub outcome: String,
    /// Time from receiving the call to its outcome.
    pub duration_ms: f64,
}

/// Receives every audit record. Called on the calling task: keep it quick, or hand records
/// to a channel.
pub trait AuditSink: Send + Sync + 'static {
    /// Takes one record.
    fn record(&self, record: &AuditRecord);
}

/// A shared sink, e.g. one audit file for the registries of the HTTP and MCP endpoints.
impl<S: AuditSink + ?Sized> AuditSink for std::sync::Arc<S> {
    fn record(&self, record: &AuditRecord) {
        (**self).record(record);
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
}

/// Redacts the named top-level arguments.
pub(crate) fn redact(arguments: &Value, secrets: &[String]) -> Value {
    let mut arguments = arguments.clone();
    if let Value::Object(map) = &mut arguments {
        for secret in secrets {
            if let Some(value) = map.get_mut(secret) {
                *value = Value::String(REDACTED.to_owned());
            }
        }
    }
    arguments
}
