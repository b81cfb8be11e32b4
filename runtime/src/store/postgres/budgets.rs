//! Budgets' counts in PostgreSQL: each reservation is one statement that reads, decides
//! and writes the count under its row's lock, so instances never both take the last unit.

use super::PostgresStore;
use crate::budget::BudgetStore;
use crate::store::StoreFuture;

/// `$1` key, `$2` amount, `$3` limit, `$4` kept until, `$5` now (ms). The count is raised
/// only while below the limit (or expired, when it starts again); the first column is the
/// count after a reservation that passed, the second the count as it was.
const RESERVE: &str = "
WITH taken AS (
    INSERT INTO toolgate_budgets AS budget (key, used, expires)
    SELECT $1::text, $2::bigint, $4::bigint WHERE $3::bigint > 0
    ON CONFLICT (key) DO UPDATE
        SET used = CASE WHEN budget.expires <= $5::bigint THEN EXCLUDED.used
                        ELSE budget.used + EXCLUDED.used END,
            expires = GREATEST(budget.expires, EXCLUDED.expires)
        WHERE budget.expires <= $5::bigint OR budget.used < $3::bigint
    RETURNING used
)
SELECT (SELECT used FROM taken),
       (SELECT CASE WHEN expires <= $5::bigint THEN 0 ELSE used END
          FROM toolgate_budgets WHERE key = $1)";

const SETTLE: &str =
    "UPDATE toolgate_budgets SET used = GREATEST(used + $2::bigint, 0) WHERE key = $1";

/// Counts past their time are dropped now and then.
const CLEAN: &str = "DELETE FROM toolgate_budgets WHERE expires < $1::bigint";

impl BudgetStore for PostgresStore {
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        amount: u64,
        limit: u64,
        expires_ms: u64,
    ) -> StoreFuture<'a, Result<u64, u64>> {
        Box::pin(async move {
            let client = self.client().await?;
            let now = crate::util::time::now_millis() as i64;
            let values = [amount, limit, expires_ms].map(|value| value.min(i64::MAX as u64) as i64);
            let statement = client
                .prepare_cached(RESERVE)
                .await
                .map_err(self.failed())?;
            let row = client
                .query_one(
                    &statement,
                    &[&key, &values[0], &values[1], &values[2], &now],
                )
                .await
                .map_err(self.failed())?;
            if self.should_clean() {
                client
                    .execute(CLEAN, &[&now])
                    .await
                    .map_err(self.failed())?;
            }
            let counted =
                |column: usize| row.get::<_, Option<i64>>(column).map(|n| n.max(0) as u64);
            Ok(match counted(0) {
                Some(after) => Ok(after),
                None => Err(counted(1).unwrap_or(0)),
            })
        })
    }

    fn settle<'a>(&'a self, key: &'a str, change: i64) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            let statement = client.prepare_cached(SETTLE).await.map_err(self.failed())?;
            client
                .execute(&statement, &[&key, &change])
                .await
                .map_err(self.failed())?;
            Ok(())
        })
    }
}
