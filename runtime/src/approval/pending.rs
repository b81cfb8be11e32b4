//! Calls waiting for approval across requests.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use crate::caller::Caller;
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
}

fn caller_id<S: serde::Serializer>(caller: &Caller, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(caller.id())
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
}

/// An in-memory [`PendingStore`] (the default).
#[derive(Debug, Default)]
pub struct MemoryPendingStore {
    calls: Mutex<HashMap<String, PendingCall>>,
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
}
