//! Calls waiting for approval across requests.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::caller::Caller;
use crate::error::ToolError;
use crate::store_error::{StoreFuture, ready};
use crate::util::sync::lock;

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
    /// When the call was made, seconds since the Unix epoch (0 for a call stored by an
    /// older version, which did not keep it).
    pub requested: u64,
    /// Expiry, seconds since the Unix epoch.
    pub expires: u64,
    /// What the tool says the call will do (see [`Tool::review`](crate::Tool::review)).
    pub review: Option<Value>,
    /// The agent run that made the call, if any.
    pub run_id: Option<String>,
    /// The call waits for its own caller's confirmation through their client (see
    /// [`AskCaller::Later`](crate::approval::AskCaller::Later)), not for an approver: it is
    /// neither listed for approvers nor redeemable by them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub caller_confirms: bool,
    /// What the registry's call wrappers kept with the call when it began to wait, by
    /// wrapper name (e.g. the trace context of the request that asked; see
    /// [`CallWrapper::keep`](crate::stage::CallWrapper::keep)).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub kept: BTreeMap<String, String>,
    /// The tool call this call is a step of (a workflow's), which waits with it and goes on
    /// once it is decided. Not shown to approvers: it holds what earlier steps gave.
    #[serde(skip)]
    pub paused: Option<crate::paused::PausedCall>,
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
    /// The result is content blocks (see [`ToolOutcome::content`](crate::ToolOutcome::content)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_content: bool,
    /// Kept until then, seconds since the Unix epoch.
    pub keep_until: u64,
}

/// Where pending calls wait. `take` must be atomic: of two concurrent takes of one ticket
/// (also from two processes sharing a database), exactly one gets the call, which is what
/// makes a ticket single-use. Expired calls are never returned by `take`, `get` or `list`,
/// and a store removes them (bounded retention).
///
/// Implementations: [`MemoryPendingStore`] (the default), and the SQLite and PostgreSQL
/// stores of [`crate::store`].
pub trait PendingStore: Send + Sync + 'static {
    /// Keeps a pending call.
    fn put(&self, call: PendingCall) -> StoreFuture<'_, ()>;
    /// Removes and returns the call of a ticket id, if it is there and not expired.
    fn take<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>>;
    /// The call of a ticket id, left in place (to check who may decide it before taking it).
    fn get<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>>;
    /// Every call still pending (for a list of approvals to review), by ticket id.
    fn list(&self) -> StoreFuture<'_, Vec<PendingCall>>;
    /// Keeps what came of a decided call of an agent run, under its ticket id.
    fn put_decided<'a>(&'a self, ticket_id: &'a str, decided: DecidedCall) -> StoreFuture<'a, ()>;
    /// What came of a decided call, if it was decided (and is still kept).
    fn decided<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<DecidedCall>>;
}

impl<T: PendingStore + ?Sized> PendingStore for std::sync::Arc<T> {
    fn put(&self, call: PendingCall) -> StoreFuture<'_, ()> {
        (**self).put(call)
    }
    fn take<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        (**self).take(ticket_id)
    }
    fn get<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        (**self).get(ticket_id)
    }
    fn list(&self) -> StoreFuture<'_, Vec<PendingCall>> {
        (**self).list()
    }
    fn put_decided<'a>(&'a self, ticket_id: &'a str, decided: DecidedCall) -> StoreFuture<'a, ()> {
        (**self).put_decided(ticket_id, decided)
    }
    fn decided<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<DecidedCall>> {
        (**self).decided(ticket_id)
    }
}

/// An in-memory [`PendingStore`] (the default): calls are lost when the process ends.
#[derive(Debug, Default)]
pub struct MemoryPendingStore {
    calls: Mutex<HashMap<String, PendingCall>>,
    decided: Mutex<HashMap<String, DecidedCall>>,
}

impl MemoryPendingStore {
    fn live(&self, ticket_id: &str, take: bool) -> Option<PendingCall> {
        let mut calls = lock(&self.calls);
        let now = crate::util::time::now_secs();
        let call = if take {
            calls.remove(ticket_id)?
        } else {
            calls.get(ticket_id)?.clone()
        };
        (call.expires > now).then_some(call)
    }
}

impl PendingStore for MemoryPendingStore {
    fn put(&self, call: PendingCall) -> StoreFuture<'_, ()> {
        let mut calls = lock(&self.calls);
        let now = crate::util::time::now_secs();
        calls.retain(|_, pending| pending.expires > now);
        calls.insert(call.ticket_id.clone(), call);
        ready(Ok(()))
    }

    fn take<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        ready(Ok(self.live(ticket_id, true)))
    }

    fn get<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        ready(Ok(self.live(ticket_id, false)))
    }

    fn list(&self) -> StoreFuture<'_, Vec<PendingCall>> {
        let now = crate::util::time::now_secs();
        let calls = lock(&self.calls);
        let mut pending: Vec<PendingCall> = calls
            .values()
            .filter(|call| call.expires > now)
            .cloned()
            .collect();
        pending.sort_by(|a, b| a.ticket_id.cmp(&b.ticket_id));
        ready(Ok(pending))
    }

    fn put_decided<'a>(&'a self, ticket_id: &'a str, decided: DecidedCall) -> StoreFuture<'a, ()> {
        let mut kept = lock(&self.decided);
        let now = crate::util::time::now_secs();
        kept.retain(|_, decided| decided.keep_until > now);
        kept.insert(ticket_id.to_owned(), decided);
        ready(Ok(()))
    }

    fn decided<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<DecidedCall>> {
        ready(Ok(lock(&self.decided).get(ticket_id).cloned()))
    }
}
