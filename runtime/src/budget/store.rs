//! Where budgets' counts are kept: this process's memory, or a database every instance
//! shares (the SQLite and PostgreSQL stores of [`crate::store`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::store_error::{StoreFuture, ready};
use crate::util::sync::lock;

/// Keeps the counts of [budgets](super::Budget). Both operations must be atomic: of
/// concurrent reservations of one count, only those made while it was below the limit
/// pass.
pub trait BudgetStore: Send + Sync + 'static {
    /// Adds `amount` to the count `key` if the count is below `limit`: `Ok` with the count
    /// after, or `Err` with the count as it stays. A count not yet kept (or kept past
    /// `expires_ms`, milliseconds since the Unix epoch) starts at zero, and is kept at
    /// least until `expires_ms`.
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        amount: u64,
        limit: u64,
        expires_ms: u64,
    ) -> StoreFuture<'a, Result<u64, u64>>;

    /// Changes the count `key` by `change` (never below zero): a reservation settled to
    /// what was used. A count no longer kept is left alone.
    fn settle<'a>(&'a self, key: &'a str, change: i64) -> StoreFuture<'a, ()>;
}

impl<T: BudgetStore + ?Sized> BudgetStore for Arc<T> {
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        amount: u64,
        limit: u64,
        expires_ms: u64,
    ) -> StoreFuture<'a, Result<u64, u64>> {
        (**self).reserve(key, amount, limit, expires_ms)
    }

    fn settle<'a>(&'a self, key: &'a str, change: i64) -> StoreFuture<'a, ()> {
        (**self).settle(key, change)
    }
}

/// Counts in this process's memory: one instance only.
#[derive(Debug, Default)]
pub struct MemoryBudgetStore {
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    /// Each count, with when it may be forgotten.
    kept: HashMap<String, (u64, u64)>,
    /// Reservations since expired counts were last dropped.
    since_clean: u32,
}

/// Expired counts are dropped once per this many reservations.
const CLEAN_EVERY: u32 = 1024;

impl BudgetStore for MemoryBudgetStore {
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        amount: u64,
        limit: u64,
        expires_ms: u64,
    ) -> StoreFuture<'a, Result<u64, u64>> {
        let now = crate::util::time::now_millis();
        let mut counts = lock(&self.counts);
        counts.since_clean += 1;
        if counts.since_clean >= CLEAN_EVERY {
            counts.since_clean = 0;
            counts.kept.retain(|_, (_, expires)| *expires > now);
        }
        let (count, expires) = counts.kept.entry(key.to_owned()).or_insert((0, expires_ms));
        if *expires <= now {
            *count = 0;
        }
        *expires = (*expires).max(expires_ms);
        let answer = match *count < limit {
            true => {
                *count = count.saturating_add(amount);
                Ok(*count)
            }
            false => Err(*count),
        };
        ready(Ok(answer))
    }

    fn settle<'a>(&'a self, key: &'a str, change: i64) -> StoreFuture<'a, ()> {
        if let Some((count, _)) = lock(&self.counts).kept.get_mut(key) {
            *count = count.saturating_add_signed(change);
        }
        ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_count_takes_while_below_its_limit() {
        let store = MemoryBudgetStore::default();
        let later = crate::util::time::now_millis() + 60_000;
        assert_eq!(store.reserve("k", 1, 2, later).await.unwrap(), Ok(1));
        assert_eq!(store.reserve("k", 5, 2, later).await.unwrap(), Ok(6));
        assert_eq!(store.reserve("k", 1, 2, later).await.unwrap(), Err(6));
        store.settle("k", -5).await.unwrap();
        assert_eq!(store.reserve("k", 1, 2, later).await.unwrap(), Ok(2));
        store.settle("k", -100).await.unwrap();
        assert_eq!(
            store.reserve("k", 0, 2, later).await.unwrap(),
            Ok(0),
            "never below zero"
        );
    }

    #[tokio::test]
    async fn an_expired_count_starts_again() {
        let store = MemoryBudgetStore::default();
        let past = crate::util::time::now_millis() - 1;
        assert_eq!(store.reserve("k", 3, 3, past).await.unwrap(), Ok(3));
        let later = past + 60_000;
        assert_eq!(store.reserve("k", 1, 3, later).await.unwrap(), Ok(1));
    }
}
