//! The event log in SQLite: appends take the file's write lock (an immediate transaction),
//! so ids grow in the order events become visible; processes sharing the file follow it by
//! looking ten times a second (SQLite has no notifications between processes).

use std::time::Duration;

use rusqlite::{TransactionBehavior, params};

use super::{SqliteStore, failed};
use crate::events::{EventLog, LoggedEvent};
use crate::store::StoreFuture;
use crate::store::schema::EVENTS_KEPT_MS;

/// How often a follower looks at the file.
const LOOK_EVERY: Duration = Duration::from_millis(100);

impl EventLog for SqliteStore {
    fn append(&self, events: Vec<LoggedEvent>) -> StoreFuture<'_, ()> {
        let clean = self.database.clean_events.now();
        self.run(move |connection, name| {
            let now = crate::util::time::now_millis() as i64;
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(failed(name))?;
            let head: i64 = transaction
                .query_row("SELECT coalesce(max(id), 0) FROM toolgate_events", [], |row| {
                    row.get(0)
                })
                .map_err(failed(name))?;
            {
                let mut insert = transaction
                    .prepare_cached(
                        "INSERT INTO toolgate_events (id, origin, time_ms, event) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .map_err(failed(name))?;
                for (id, event) in (head + 1..).zip(&events) {
                    insert
                        .execute(params![id, event.origin, now, event.json])
                        .map_err(failed(name))?;
                }
            }
            if clean {
                transaction
                    .execute(
                        "DELETE FROM toolgate_events WHERE time_ms < ?1 AND id <= ?2",
                        params![now - EVENTS_KEPT_MS, head],
                    )
                    .map_err(failed(name))?;
            }
            transaction.commit().map_err(failed(name))
        })
    }

    fn after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<LoggedEvent>> {
        let (after, limit) = (after.min(i64::MAX as u64) as i64, limit as i64);
        self.run(move |connection, name| {
            let mut query = connection
                .prepare_cached(
                    "SELECT id, origin, event FROM toolgate_events WHERE id > ?1 ORDER BY id LIMIT ?2",
                )
                .map_err(failed(name))?;
            let rows = query
                .query_map(params![after, limit], |row| {
                    Ok(LoggedEvent {
                        id: row.get::<_, i64>(0)? as u64,
                        origin: row.get(1)?,
                        json: row.get(2)?,
                    })
                })
                .map_err(failed(name))?;
            rows.collect::<Result<_, _>>().map_err(failed(name))
        })
    }

    fn newest(&self) -> StoreFuture<'_, u64> {
        self.run(|connection, name| {
            connection
                .query_row(
                    "SELECT coalesce(max(id), 0) FROM toolgate_events",
                    [],
                    |row| row.get::<_, i64>(0),
                )
                .map(|id| id as u64)
                .map_err(failed(name))
        })
    }

    fn wait_for_news(&self, _after: u64, longest: Duration) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            tokio::time::sleep(LOOK_EVERY.min(longest)).await;
            Ok(())
        })
    }

    fn lease<'a>(&'a self, origin: &'a str, until_ms: u64) -> StoreFuture<'a, ()> {
        let (origin, until) = (origin.to_owned(), until_ms.min(i64::MAX as u64) as i64);
        self.run(move |connection, name| {
            let now = crate::util::time::now_millis() as i64;
            connection
                .execute(
                    "INSERT INTO toolgate_event_followers (origin, until_ms) VALUES (?1, ?2)
                     ON CONFLICT (origin) DO UPDATE SET until_ms = excluded.until_ms",
                    params![origin, until],
                )
                .map_err(failed(name))?;
            connection
                .execute(
                    "DELETE FROM toolgate_event_followers WHERE until_ms < ?1",
                    [now],
                )
                .map_err(failed(name))?;
            Ok(())
        })
    }

    fn followed_by_others<'a>(&'a self, origin: &'a str) -> StoreFuture<'a, bool> {
        let origin = origin.to_owned();
        self.run(move |connection, name| {
            let now = crate::util::time::now_millis() as i64;
            connection
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM toolgate_event_followers WHERE origin <> ?1 AND until_ms >= ?2)",
                    params![origin, now],
                    |row| row.get::<_, bool>(0),
                )
                .map_err(failed(name))
        })
    }
}
