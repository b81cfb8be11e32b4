//! Sign-in sessions in SQLite.

use rusqlite::{OptionalExtension, params};

use super::{SqliteStore, failed, text_of};
use crate::store::{SessionStore, StoreFuture};
use crate::util::time::now_millis;

impl SessionStore for SqliteStore {
    fn put(&self, key: String, value: String, expires_ms: u64) -> StoreFuture<'_, ()> {
        self.run(move |connection, name| {
            connection
                .execute(
                    "DELETE FROM toolgate_sessions WHERE expires < ?1",
                    [now_millis() as i64],
                )
                .map_err(failed(name))?;
            connection
                .execute(
                    "INSERT OR REPLACE INTO toolgate_sessions (key, expires, value) VALUES (?1, ?2, ?3)",
                    params![key, expires_ms as i64, value],
                )
                .map_err(failed(name))?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        let key = key.to_owned();
        self.run(move |connection, name| {
            text_of(
                connection,
                name,
                "SELECT value FROM toolgate_sessions WHERE key = ?1 AND expires > ?2",
                params![key, now_millis() as i64],
            )
        })
    }

    fn take<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        let key = key.to_owned();
        self.run(move |connection, name| {
            let taken: Option<Option<String>> = connection
                .query_row(
                    "DELETE FROM toolgate_sessions WHERE key = ?1 RETURNING \
                     CASE WHEN expires > ?2 THEN value END",
                    params![key, now_millis() as i64],
                    |row| row.get(0),
                )
                .optional()
                .map_err(failed(name))?;
            Ok(taken.flatten())
        })
    }
}
