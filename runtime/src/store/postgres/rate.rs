//! Rate-limit budgets in PostgreSQL: GCRA in one statement, on the database's clock, so
//! every instance takes from one budget and their clocks need not agree.

use std::time::Duration;

use super::PostgresStore;
use crate::rate_limits::{RateLimit, RateLimitStore};
use crate::store::StoreFuture;

/// `$1` key, `$2` interval and `$3` interval × burst, in microseconds. The upsert moves the
/// budget's theoretical arrival time only if the call fits (the row is locked while it is
/// decided); the last column says how long to wait when it does not.
const TAKE: &str = "
WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us),
taken AS (
    INSERT INTO toolgate_rate_limits AS budget (key, tat_us)
    SELECT $1, now.us + $2 FROM now
    ON CONFLICT (key) DO UPDATE
        SET tat_us = GREATEST(budget.tat_us, (SELECT us FROM now)) + $2
        WHERE GREATEST(budget.tat_us, (SELECT us FROM now)) + $2 <= (SELECT us FROM now) + $3
    RETURNING tat_us
)
SELECT EXISTS (SELECT 1 FROM taken),
       (SELECT GREATEST(tat_us, (SELECT us FROM now)) + $2 - ((SELECT us FROM now) + $3)
          FROM toolgate_rate_limits WHERE key = $1)";

/// Budgets full again (holding nothing) are dropped now and then.
const CLEAN: &str = "DELETE FROM toolgate_rate_limits \
    WHERE tat_us < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

impl RateLimitStore for PostgresStore {
    fn take<'a>(&'a self, key: &'a str, limit: RateLimit) -> StoreFuture<'a, Result<(), Duration>> {
        Box::pin(async move {
            let client = self.client().await?;
            let interval = limit.interval().as_micros().max(1) as i64;
            let span = interval.saturating_mul(i64::from(limit.burst()));
            let statement = client.prepare_cached(TAKE).await.map_err(self.failed())?;
            let row = client
                .query_one(&statement, &[&key, &interval, &span])
                .await
                .map_err(self.failed())?;
            if self.should_clean() {
                client.execute(CLEAN, &[]).await.map_err(self.failed())?;
            }
            if row.get::<_, bool>(0) {
                return Ok(Ok(()));
            }
            let wait = row.get::<_, Option<i64>>(1).unwrap_or(interval).max(1);
            Ok(Err(Duration::from_micros(wait as u64)))
        })
    }
}
