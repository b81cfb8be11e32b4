//! Calls waiting for approval across requests.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::caller::Caller;
use crate::error::ToolError;
use crate::sync::lock;

/// A call that needs approval and has not run.
#[derive(Debug, Clone, Serialize)]
pub struct PendingCall {
    /// The ticket that redeems it.
    pub ticket: String,
    /// The ticket's id (the store's key).
    pub ticket_id: String,
    /// Who made the call (it runs as them when approved).
    #[serde(serialize_with = "caller_id")]
    pub caller: Caller,
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments, as validated (the real values: a store keeps them to run the call;
    /// [`Registry::pending_approvals`](crate::Registry::pending_approvals) shows them with
    /// secrets redacted).
    pub arguments: Value,
    /// Why approval is needed.
    pub reason: String,
    /// Expiry, seconds since the Unix epoch.
    pub expires: u64,
    /// What the tool says the call will do (see [`Tool::review`](crate::Tool::review)).
    pub review: Option<Value>,
    /// The agent run that made the call, if any.
    pub run_id: Option<String>,
}

fn caller_id<S: serde::Serializer>(caller: &Caller, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(caller.id())
}

/// What came of a waiting call of an agent run once it was decided (approved and run, or
/// denied), kept so that the run can go on with it, wherever the decision was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecidedCall {
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The outcome the model is to read.
    pub result: Result<Value, ToolError>,
    /// Kept until then, seconds since the Unix epoch.
    pub keep_until: u64,
}

/// Where pending calls wait. `take` must be atomic: of two concurrent takes of one ticket,
/// exactly one gets the call, which is what makes a ticket single-use.
pub trait PendingStore: Send + Sync + 'static {
    /// Keeps a pending call.
    fn put(&self, call: PendingCall);
    /// Removes and returns the call of a ticket id.
    fn take(&self, ticket_id: &str) -> Option<PendingCall>;
    /// The call of a ticket id, left in place (to check who may decide it before taking it).
    fn get(&self, ticket_id: &str) -> Option<PendingCall>;
    /// Every call still pending (for a list of approvals to review).
    fn list(&self) -> Vec<PendingCall>;
    /// Keeps what came of a decided call of an agent run, under its ticket id.
    fn put_decided(&self, ticket_id: &str, decided: DecidedCall);
    /// What came of a decided call, if it was decided (and is still kept).
    fn decided(&self, ticket_id: &str) -> Option<DecidedCall>;
}

impl<T: PendingStore> PendingStore for std::sync::Arc<T> {
    fn put(&self, call: PendingCall) {
        (**self).put(call)
    }
    fn take(&self, ticket_id: &str) -> Option<PendingCall> {
        (**self).take(ticket_id)
    }
    fn get(&self, ticket_id: &str) -> Option<PendingCall> {
        (**self).get(ticket_id)
    }
    fn list(&self) -> Vec<PendingCall> {
        (**self).list()
    }
    fn put_decided(&self, ticket_id: &str, decided: DecidedCall) {
        (**self).put_decided(ticket_id, decided)
    }
    fn decided(&self, ticket_id: &str) -> Option<DecidedCall> {
        (**self).decided(ticket_id)
    }
}

/// An in-memory [`PendingStore`] (the default).
#[derive(Debug, Default)]
pub struct MemoryPendingStore {
    calls: Mutex<HashMap<String, PendingCall>>,
    decided: Mutex<HashMap<String, DecidedCall>>,
}

impl PendingStore for MemoryPendingStore {
    fn put(&self, call: PendingCall) {
        let mut calls = lock(&self.calls);
        let now = crate::time::now_secs();
        calls.retain(|_, pending| pending.expires > now);
        calls.insert(call.ticket_id.clone(), call);
    }

    fn take(&self, ticket_id: &str) -> Option<PendingCall> {
        lock(&self.calls).remove(ticket_id)
    }

    fn get(&self, ticket_id: &str) -> Option<PendingCall> {
        lock(&self.calls).get(ticket_id).cloned()
    }

    fn list(&self) -> Vec<PendingCall> {
        let now = crate::time::now_secs();
        let calls = lock(&self.calls);
        let mut pending: Vec<PendingCall> = calls
            .values()
            .filter(|call| call.expires > now)
            .cloned()
            .collect();
        pending.sort_by(|a, b| a.ticket_id.cmp(&b.ticket_id));
        pending
    }

    fn put_decided(&self, ticket_id: &str, decided: DecidedCall) {
        let mut kept = lock(&self.decided);
        let now = crate::time::now_secs();
        kept.retain(|_, decided| decided.keep_until > now);
        kept.insert(ticket_id.to_owned(), decided);
    }

    fn decided(&self, ticket_id: &str) -> Option<DecidedCall> {
        lock(&self.decided).get(ticket_id).cloned()
    }
}
