//! Rate-limit budgets in SQLite: read, decide and write in one immediate transaction, so
//! processes sharing the file take from one budget.

use std::time::Duration;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{SqliteStore, failed, now_micros};
use crate::rate_limits::{RateLimit, RateLimitStore};
use crate::store::StoreFuture;

impl RateLimitStore for SqliteStore {
    fn take<'a>(&'a self, key: &'a str, limit: RateLimit) -> StoreFuture<'a, Result<(), Duration>> {
        let key = key.to_owned();
        let clean = self.database.clean_budgets.now();
        self.run(move |connection, name| {
            let now = now_micros();
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(failed(name))?;
            if clean {
                transaction
                    .execute("DELETE FROM toolgate_rate_limits WHERE tat_us < ?1", [now])
                    .map_err(failed(name))?;
            }
            let tat: Option<i64> = transaction
                .query_row(
                    "SELECT tat_us FROM toolgate_rate_limits WHERE key = ?1",
                    [&key],
                    |row| row.get(0),
                )
                .optional()
                .map_err(failed(name))?;
            let interval = limit.interval().as_micros().max(1) as i64;
            let answer = match gcra(tat, now, interval, i64::from(limit.burst())) {
                Ok(new_tat) => {
                    transaction
                        .execute(
                            "INSERT OR REPLACE INTO toolgate_rate_limits (key, tat_us) VALUES (?1, ?2)",
                            params![key, new_tat],
                        )
                        .map_err(failed(name))?;
                    Ok(())
                }
                Err(wait) => Err(Duration::from_micros(wait as u64)),
            };
            transaction.commit().map_err(failed(name))?;
            Ok(answer)
        })
    }
}

/// GCRA over the budget's theoretical arrival time `tat` (all in microseconds): the new one
/// if a call is allowed now, or how long until one would be.
fn gcra(tat: Option<i64>, now: i64, interval: i64, burst: i64) -> Result<i64, i64> {
    let new_tat = tat.unwrap_or(now).max(now).saturating_add(interval);
    let allowed_until = now.saturating_add(interval.saturating_mul(burst));
    if new_tat <= allowed_until {
        Ok(new_tat)
    } else {
        Err(new_tat - allowed_until)
    }
}

#[cfg(test)]
mod tests {
    use super::gcra;

    #[test]
    fn a_burst_then_one_per_interval() {
        // Three at once, then the fourth waits one interval.
        let mut tat = None;
        for _ in 0..3 {
            tat = Some(gcra(tat, 0, 1_000, 3).unwrap());
        }
        assert_eq!(gcra(tat, 0, 1_000, 3), Err(1_000));
        assert_eq!(gcra(tat, 400, 1_000, 3), Err(600));
        assert!(gcra(tat, 1_000, 1_000, 3).is_ok());
        // A budget left alone fills up again, no further.
        assert_eq!(gcra(Some(5), 1_000_000, 1_000, 3), Ok(1_001_000));
    }
}
