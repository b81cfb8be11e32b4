//! Budgets' counts in SQLite: read, decide and write in one immediate transaction, so
//! processes sharing the file never both take the last unit.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{SqliteStore, failed};
use crate::budget::BudgetStore;
use crate::store::StoreFuture;

impl BudgetStore for SqliteStore {
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        amount: u64,
        limit: u64,
        expires_ms: u64,
    ) -> StoreFuture<'a, Result<u64, u64>> {
        let key = key.to_owned();
        let clean = self.database.clean_budgets.now();
        let [amount, limit, expires] =
            [amount, limit, expires_ms].map(|n| n.min(i64::MAX as u64) as i64);
        self.run(move |connection, name| {
            let now = crate::util::time::now_millis() as i64;
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(failed(name))?;
            if clean {
                transaction
                    .execute("DELETE FROM toolgate_budgets WHERE expires < ?1", [now])
                    .map_err(failed(name))?;
            }
            let kept: Option<(i64, i64)> = transaction
                .query_row(
                    "SELECT used, expires FROM toolgate_budgets WHERE key = ?1",
                    [&key],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(failed(name))?;
            let (used, kept_until) = match kept {
                Some((used, until)) if until > now => (used, until),
                _ => (0, 0),
            };
            if used >= limit {
                return Ok(Err(used.max(0) as u64));
            }
            let after = used.saturating_add(amount);
            transaction
                .execute(
                    "INSERT OR REPLACE INTO toolgate_budgets (key, used, expires) VALUES (?1, ?2, ?3)",
                    params![key, after, kept_until.max(expires)],
                )
                .map_err(failed(name))?;
            transaction.commit().map_err(failed(name))?;
            Ok(Ok(after as u64))
        })
    }

    fn settle<'a>(&'a self, key: &'a str, change: i64) -> StoreFuture<'a, ()> {
        let key = key.to_owned();
        self.run(move |connection, name| {
            connection
                .execute(
                    "UPDATE toolgate_budgets SET used = max(used + ?2, 0) WHERE key = ?1",
                    params![key, change],
                )
                .map_err(failed(name))?;
            Ok(())
        })
    }
}
