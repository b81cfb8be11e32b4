//! How the database stores write what they keep: as JSON text, with the few columns they
//! query on beside it. Shared by SQLite and PostgreSQL, so both read what the other wrote.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::Run;
use crate::approval::PendingCall;
use crate::audit::AuditRecord;
use crate::caller::Caller;
use crate::paused::PausedCall;
use crate::store::StoreError;

/// A pending call as stored: the whole caller (the public form names only its id).
#[derive(Serialize, Deserialize)]
struct StoredPending {
    ticket: String,
    ticket_id: String,
    caller: Caller,
    call_id: String,
    tool: String,
    arguments: Value,
    reason: String,
    #[serde(default)]
    requested: u64,
    expires: u64,
    review: Option<Value>,
    run_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    caller_confirms: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    kept: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    paused: Option<PausedCall>,
}

pub(crate) fn pending_to_text(call: &PendingCall) -> String {
    let stored = StoredPending {
        ticket: call.ticket.clone(),
        ticket_id: call.ticket_id.clone(),
        caller: call.caller.clone(),
        call_id: call.call_id.clone(),
        tool: call.tool.clone(),
        arguments: call.arguments.clone(),
        reason: call.reason.clone(),
        requested: call.requested,
        expires: call.expires,
        review: call.review.clone(),
        run_id: call.run_id.clone(),
        caller_confirms: call.caller_confirms,
        kept: call.kept.clone(),
        paused: call.paused.clone(),
    };
    serde_json::to_string(&stored).expect("a pending call serializes")
}

pub(crate) fn pending_from_text(store: &str, text: &str) -> Result<PendingCall, StoreError> {
    let stored: StoredPending = from_text(store, "a pending call", text)?;
    Ok(PendingCall {
        ticket: stored.ticket,
        ticket_id: stored.ticket_id,
        caller: stored.caller,
        call_id: stored.call_id,
        tool: stored.tool,
        arguments: stored.arguments,
        reason: stored.reason,
        requested: stored.requested,
        expires: stored.expires,
        review: stored.review,
        run_id: stored.run_id,
        caller_confirms: stored.caller_confirms,
        kept: stored.kept,
        paused: stored.paused,
    })
}

/// Whether a run waits for a person (such runs are kept longer).
pub(crate) fn run_waits(run: &Run) -> bool {
    run.status.waits()
}

pub(crate) fn to_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("stored values serialize")
}

pub(crate) fn from_text<T: for<'de> Deserialize<'de>>(
    store: &str,
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text)
        .map_err(|error| StoreError::corrupt(store, format!("{what} could not be read: {error}")))
}

pub(crate) fn record_from_body(store: &str, body: &str) -> Result<AuditRecord, StoreError> {
    from_text(store, "an audit record", body)
}

/// How long finished agent runs are kept (runs waiting for a person: [`WAITING_RUN_MS`]).
pub(crate) const FINISHED_RUN_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// How long a run waiting for a person is kept after its last change.
pub(crate) const WAITING_RUN_MS: i64 = 30 * 24 * 60 * 60 * 1000;

/// Says yes once every `N` times it is asked: for clean-ups that need not run on every call.
#[derive(Debug, Default)]
pub(crate) struct Every<const N: u64>(AtomicU64);

impl<const N: u64> Every<N> {
    pub(crate) fn now(&self) -> bool {
        self.0.fetch_add(1, Ordering::Relaxed) % N == N - 1
    }
}
