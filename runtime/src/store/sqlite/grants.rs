//! "Always" grants in SQLite.

use rusqlite::{OptionalExtension, params};

use super::{SqliteStore, failed};
use crate::approval::{Grant, GrantStore};
use crate::store::StoreFuture;

impl GrantStore for SqliteStore {
    fn grant(&self, grant: Grant) -> StoreFuture<'_, ()> {
        self.run(move |connection, name| {
            connection
                .execute(
                    "INSERT OR REPLACE INTO toolgate_grants (caller, tool, granted_by, time_ms) VALUES (?1, ?2, ?3, ?4)",
                    params![grant.caller, grant.tool, grant.granted_by, grant.time_ms as i64],
                )
                .map_err(failed(name))?;
            Ok(())
        })
    }

    fn granted<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        let (caller, tool) = (caller.to_owned(), tool.to_owned());
        self.run(move |connection, name| {
            let found: Option<i64> = connection
                .query_row(
                    "SELECT 1 FROM toolgate_grants WHERE caller = ?1 AND tool = ?2",
                    params![caller, tool],
                    |row| row.get(0),
                )
                .optional()
                .map_err(failed(name))?;
            Ok(found.is_some())
        })
    }

    fn revoke<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        let (caller, tool) = (caller.to_owned(), tool.to_owned());
        self.run(move |connection, name| {
            let removed = connection
                .execute(
                    "DELETE FROM toolgate_grants WHERE caller = ?1 AND tool = ?2",
                    params![caller, tool],
                )
                .map_err(failed(name))?;
            Ok(removed > 0)
        })
    }

    fn list(&self) -> StoreFuture<'_, Vec<Grant>> {
        self.run(move |connection, name| {
            let mut statement = connection
                .prepare(
                    "SELECT caller, tool, granted_by, time_ms FROM toolgate_grants ORDER BY caller, tool",
                )
                .map_err(failed(name))?;
            let grants = statement
                .query_map([], |row| {
                    Ok(Grant {
                        caller: row.get(0)?,
                        tool: row.get(1)?,
                        granted_by: row.get(2)?,
                        time_ms: row.get::<_, i64>(3)? as u64,
                    })
                })
                .map_err(failed(name))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(failed(name))?;
            Ok(grants)
        })
    }
}
