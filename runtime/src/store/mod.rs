//! Where a registry keeps what it must remember: pending approvals (and agent runs), "always"
//! grants, rate-limit budgets, and audit records.
//!
//! Each kind of state has its trait beside the data it keeps ([`PendingStore`],
//! [`RunStore`], [`GrantStore`], [`RateLimitStore`], [`AuditStore`], and the console's
//! sign-in [`SessionStore`]); the registry holds
//! trait objects, so no call path knows which database it talks to. [`Stores`] bundles one
//! of each, from one address:
//!
//! | address | what | for |
//! |---|---|---|
//! | `memory` | this process's memory (the default) | tests, one short-lived process |
//! | `sqlite:PATH` | one SQLite file (feature `sqlite`) | one machine: survives restarts, no server |
//! | `postgres://...` | a PostgreSQL database (feature `postgres`) | many instances sharing approvals, budgets and one audit chain |
//!
//! ```
//! # async fn example() -> Result<(), toolgate::store::StoreError> {
//! use toolgate::store::Stores;
//!
//! let stores = Stores::open("memory").await?;
//! let registry = toolgate::Registry::builder().roles(["user"]).stores(&stores).build();
//! # let _ = registry;
//! # Ok(())
//! # }
//! ```
//!
//! The database stores create their tables themselves (versioned migrations, applied once
//! even when several instances start together) and refuse a database set up by a newer
//! toolgate ([`StoreError::NewerSchema`]).

#[cfg(feature = "postgres")]
mod group_commit;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod schema;
mod sessions;
#[cfg(feature = "sqlite")]
pub mod sqlite;

use std::sync::Arc;

pub use crate::store_error::{StoreError, StoreFuture};

pub use crate::agent::{MemoryRunStore, RunStore};
pub use crate::approval::{GrantStore, MemoryGrantStore, MemoryPendingStore, PendingStore};
pub use crate::audit::{AuditStore, MemoryAuditStore};
pub use crate::budget::{BudgetStore, MemoryBudgetStore};
pub use crate::events::{EventLog, LoggedEvent};
pub use crate::rate_limits::{MemoryRateLimitStore, RateLimitStore};
pub use sessions::{MemorySessionStore, SessionStore};

/// One store of each kind; give it to [`RegistryBuilder::stores`](crate::RegistryBuilder::stores)
/// (and its `runs` to [`AgentBuilder::run_store`](crate::agent::AgentBuilder::run_store)).
#[derive(Clone)]
pub struct Stores {
    /// Calls waiting for approval, and what came of decided ones.
    pub pending: Arc<dyn PendingStore>,
    /// Agent runs between requests.
    pub runs: Arc<dyn RunStore>,
    /// Standing "always" grants.
    pub grants: Arc<dyn GrantStore>,
    /// Rate-limit budgets.
    pub rate_limits: Arc<dyn RateLimitStore>,
    /// The counts of [budgets](crate::budget).
    pub budgets: Arc<dyn BudgetStore>,
    /// Audit records, for history and verification.
    pub audit: Arc<dyn AuditStore>,
    /// People's sign-in sessions (the console's sign-in through an identity provider).
    pub sessions: Arc<dyn SessionStore>,
    /// Where the instances sharing these stores leave [events](crate::events) for each
    /// other; `None` (memory) keeps them in the process.
    pub events: Option<Arc<dyn EventLog>>,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores").finish_non_exhaustive()
    }
}

impl crate::RegistryBuilder {
    /// Keeps pending approvals, grants, rate-limit budgets and audit records in these stores
    /// (e.g. from [`Stores::open`]`("sqlite:state.db")`); agent runs go to
    /// [`AgentBuilder::run_store`](crate::agent::AgentBuilder::run_store).
    pub fn stores(self, stores: &Stores) -> Self {
        let approvals = (Arc::clone(&stores.pending), Arc::clone(&stores.grants));
        let counts = (Arc::clone(&stores.rate_limits), Arc::clone(&stores.budgets));
        self.shared_stores(approvals, counts, Arc::clone(&stores.audit))
            .event_log(stores.events.clone())
    }
}

impl Stores {
    /// Everything in this process's memory (what a registry uses when given no stores); the
    /// audit store keeps the last 1,000 records.
    pub fn memory() -> Stores {
        Stores {
            pending: Arc::new(MemoryPendingStore::default()),
            runs: Arc::new(MemoryRunStore::default()),
            grants: Arc::new(MemoryGrantStore::default()),
            rate_limits: Arc::new(MemoryRateLimitStore::default()),
            budgets: Arc::new(MemoryBudgetStore::default()),
            audit: Arc::new(MemoryAuditStore::new(1000)),
            sessions: Arc::new(MemorySessionStore::default()),
            events: None,
        }
    }

    /// One store serving every kind of state (as the database stores do).
    pub fn all_in<S>(store: &S) -> Stores
    where
        S: PendingStore
            + RunStore
            + GrantStore
            + RateLimitStore
            + BudgetStore
            + AuditStore
            + SessionStore
            + EventLog
            + Clone,
    {
        Stores {
            pending: Arc::new(store.clone()),
            runs: Arc::new(store.clone()),
            grants: Arc::new(store.clone()),
            rate_limits: Arc::new(store.clone()),
            budgets: Arc::new(store.clone()),
            audit: Arc::new(store.clone()),
            sessions: Arc::new(store.clone()),
            events: Some(Arc::new(store.clone())),
        }
    }

    /// Opens the stores an address names: `memory`, `sqlite:PATH` (a file, created if
    /// missing) or `postgres://user@host:port/database` (also `postgresql://`). Database
    /// stores need their feature (`sqlite`, `postgres`); an address of a store that is not
    /// compiled in says which feature to enable.
    pub async fn open(address: &str) -> Result<Stores, StoreError> {
        if address == "memory" {
            return Ok(Stores::memory());
        }
        if let Some(path) = address.strip_prefix("sqlite:") {
            return open_sqlite(path).await;
        }
        if address.starts_with("postgres://") || address.starts_with("postgresql://") {
            return open_postgres(address).await;
        }
        Err(StoreError::BadAddress(format!(
            "`{}` is not a store address; use `memory`, `sqlite:PATH` or `postgres://user@host/database`",
            crate::util::bounded::clip(address, 200)
        )))
    }
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(path: &str) -> Result<Stores, StoreError> {
    Ok(sqlite::SqliteStore::open(path).await?.stores())
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_path: &str) -> Result<Stores, StoreError> {
    Err(StoreError::BadAddress(
        "SQLite stores need toolgate's `sqlite` feature".into(),
    ))
}

#[cfg(feature = "postgres")]
async fn open_postgres(address: &str) -> Result<Stores, StoreError> {
    Ok(postgres::PostgresStore::connect(address).await?.stores())
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_address: &str) -> Result<Stores, StoreError> {
    Err(StoreError::BadAddress(
        "PostgreSQL stores need toolgate's `postgres` feature".into(),
    ))
}
