//! Pending calls in SQLite: `take` deletes the row and returns it in one statement, so a
//! ticket is redeemed once, also by two processes at the same time.

use rusqlite::params;

use super::{SqliteStore, failed, text_of};
use crate::approval::{DecidedCall, PendingCall, PendingStore};
use crate::store::StoreFuture;
use crate::store::rows::{from_text, pending_from_text, pending_to_text, to_text};

impl PendingStore for SqliteStore {
    fn put(&self, call: PendingCall) -> StoreFuture<'_, ()> {
        self.run(move |connection, name| {
            let now = crate::util::time::now_secs() as i64;
            let transaction = connection.transaction().map_err(failed(name))?;
            // Bounded retention: what expired goes when something new comes.
            transaction
                .execute("DELETE FROM toolgate_pending WHERE expires <= ?1", [now])
                .map_err(failed(name))?;
            transaction
                .execute(
                    "DELETE FROM toolgate_decided WHERE keep_until <= ?1",
                    [now],
                )
                .map_err(failed(name))?;
            transaction
                .execute(
                    "INSERT OR REPLACE INTO toolgate_pending (ticket_id, expires, call) VALUES (?1, ?2, ?3)",
                    params![call.ticket_id, call.expires as i64, pending_to_text(&call)],
                )
                .map_err(failed(name))?;
            transaction.commit().map_err(failed(name))
        })
    }

    fn take<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        self.unexpired(
            "DELETE FROM toolgate_pending WHERE ticket_id = ?1 AND expires > ?2 RETURNING call",
            ticket_id,
        )
    }

    fn get<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        self.unexpired(
            "SELECT call FROM toolgate_pending WHERE ticket_id = ?1 AND expires > ?2",
            ticket_id,
        )
    }

    fn list(&self) -> StoreFuture<'_, Vec<PendingCall>> {
        self.run(move |connection, name| {
            let now = crate::util::time::now_secs() as i64;
            let mut statement = connection
                .prepare("SELECT call FROM toolgate_pending WHERE expires > ?1 ORDER BY ticket_id")
                .map_err(failed(name))?;
            let texts = statement
                .query_map([now], |row| row.get::<_, String>(0))
                .map_err(failed(name))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(failed(name))?;
            texts
                .iter()
                .map(|text| pending_from_text(name, text))
                .collect()
        })
    }

    fn put_decided<'a>(&'a self, ticket_id: &'a str, decided: DecidedCall) -> StoreFuture<'a, ()> {
        let ticket_id = ticket_id.to_owned();
        self.run(move |connection, name| {
            connection
                .execute(
                    "INSERT OR REPLACE INTO toolgate_decided (ticket_id, keep_until, decided) VALUES (?1, ?2, ?3)",
                    params![ticket_id, decided.keep_until as i64, to_text(&decided)],
                )
                .map_err(failed(name))?;
            Ok(())
        })
    }

    fn decided<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<DecidedCall>> {
        let ticket_id = ticket_id.to_owned();
        self.run(move |connection, name| {
            let now = crate::util::time::now_secs() as i64;
            let text = text_of(
                connection,
                name,
                "SELECT decided FROM toolgate_decided WHERE ticket_id = ?1 AND keep_until > ?2",
                params![ticket_id, now],
            )?;
            text.map(|text| from_text(name, "a decided call", &text))
                .transpose()
        })
    }
}

impl SqliteStore {
    /// The waiting call `statement` yields (`?1` the ticket id, `?2` now): one that has not
    /// expired, read (`SELECT`) or taken (`DELETE ... RETURNING`).
    fn unexpired<'a>(
        &'a self,
        statement: &'static str,
        ticket_id: &str,
    ) -> StoreFuture<'a, Option<PendingCall>> {
        let ticket_id = ticket_id.to_owned();
        self.run(move |connection, name| {
            let now = crate::util::time::now_secs() as i64;
            let text = text_of(connection, name, statement, params![ticket_id, now])?;
            text.map(|text| pending_from_text(name, &text)).transpose()
        })
    }
}
