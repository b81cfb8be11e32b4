//! Standing "always" grants: a person approved every later call of a tool by a caller.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::store_error::{StoreFuture, ready};
use crate::util::sync::lock;

/// A caller may run a tool without asking again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The caller's id.
    pub caller: String,
    /// The tool.
    pub tool: String,
    /// Who granted it.
    pub granted_by: Option<String>,
    /// When, milliseconds since the Unix epoch.
    pub time_ms: u64,
}

/// Where grants are kept: in memory ([`MemoryGrantStore`], the default: forgotten when the
/// process ends), or in a database (the SQLite and PostgreSQL stores of [`crate::store`]),
/// where they survive restarts and hold for every instance.
pub trait GrantStore: Send + Sync + 'static {
    /// Keeps a grant (replacing one for the same caller and tool).
    fn grant(&self, grant: Grant) -> StoreFuture<'_, ()>;
    /// Whether `caller` holds a grant for `tool`.
    fn granted<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool>;
    /// Removes a grant; whether there was one.
    fn revoke<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool>;
    /// Every grant, by caller and tool.
    fn list(&self) -> StoreFuture<'_, Vec<Grant>>;
}

impl<T: GrantStore + ?Sized> GrantStore for std::sync::Arc<T> {
    fn grant(&self, grant: Grant) -> StoreFuture<'_, ()> {
        (**self).grant(grant)
    }
    fn granted<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        (**self).granted(caller, tool)
    }
    fn revoke<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        (**self).revoke(caller, tool)
    }
    fn list(&self) -> StoreFuture<'_, Vec<Grant>> {
        (**self).list()
    }
}

/// Grants in this process's memory.
#[derive(Debug, Default)]
pub struct MemoryGrantStore {
    grants: Mutex<BTreeMap<(String, String), Grant>>,
}

impl GrantStore for MemoryGrantStore {
    fn grant(&self, grant: Grant) -> StoreFuture<'_, ()> {
        let key = (grant.caller.clone(), grant.tool.clone());
        lock(&self.grants).insert(key, grant);
        ready(Ok(()))
    }

    fn granted<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        let key = (caller.to_owned(), tool.to_owned());
        ready(Ok(lock(&self.grants).contains_key(&key)))
    }

    fn revoke<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        let key = (caller.to_owned(), tool.to_owned());
        ready(Ok(lock(&self.grants).remove(&key).is_some()))
    }

    fn list(&self) -> StoreFuture<'_, Vec<Grant>> {
        ready(Ok(lock(&self.grants).values().cloned().collect()))
    }
}
