//! Agent runs in SQLite: `take` deletes and returns the row in one statement, so a run is
//! resumed once. Finished runs are kept a week, runs waiting for a person a month.

use rusqlite::params;

use super::{SqliteStore, failed, text_of};
use crate::agent::{Run, RunId, RunStore};
use crate::store::StoreFuture;
use crate::store::rows::{FINISHED_RUN_MS, WAITING_RUN_MS, from_text, run_waits, to_text};

impl RunStore for SqliteStore {
    fn put(&self, run: Run) -> StoreFuture<'_, ()> {
        self.run(move |connection, name| {
            let now = crate::util::time::now_millis() as i64;
            let transaction = connection.transaction().map_err(failed(name))?;
            transaction
                .execute(
                    "DELETE FROM toolgate_runs WHERE (waiting = 0 AND updated_ms < ?1) OR updated_ms < ?2",
                    params![now - FINISHED_RUN_MS, now - WAITING_RUN_MS],
                )
                .map_err(failed(name))?;
            transaction
                .execute(
                    "INSERT OR REPLACE INTO toolgate_runs (id, waiting, updated_ms, run) VALUES (?1, ?2, ?3, ?4)",
                    params![run.id.as_str(), run_waits(&run), now, to_text(&run)],
                )
                .map_err(failed(name))?;
            transaction.commit().map_err(failed(name))
        })
    }

    fn take<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        let id = id.as_str().to_owned();
        self.run(move |connection, name| {
            let text = text_of(
                connection,
                name,
                "DELETE FROM toolgate_runs WHERE id = ?1 RETURNING run",
                [id],
            )?;
            text.map(|text| from_text(name, "an agent run", &text))
                .transpose()
        })
    }

    fn get<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        let id = id.as_str().to_owned();
        self.run(move |connection, name| {
            let text = text_of(
                connection,
                name,
                "SELECT run FROM toolgate_runs WHERE id = ?1",
                [id],
            )?;
            text.map(|text| from_text(name, "an agent run", &text))
                .transpose()
        })
    }
}
