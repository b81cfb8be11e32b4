//! Agent runs in PostgreSQL: `take` is one `DELETE ... RETURNING`, so a run is resumed once,
//! on whichever instance. Finished runs are kept a week, runs waiting for a person a month.

use super::PostgresStore;
use crate::agent::{Run, RunId, RunStore};
use crate::store::StoreFuture;
use crate::store::rows::{FINISHED_RUN_MS, WAITING_RUN_MS, from_text, run_waits, to_text};

impl RunStore for PostgresStore {
    fn put(&self, run: Run) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            let now = crate::util::time::now_millis() as i64;
            client
                .execute(
                    "DELETE FROM toolgate_runs WHERE (NOT waiting AND updated_ms < $1) OR updated_ms < $2",
                    &[&(now - FINISHED_RUN_MS), &(now - WAITING_RUN_MS)],
                )
                .await
                .map_err(self.failed())?;
            client
                .execute(
                    "INSERT INTO toolgate_runs (id, waiting, updated_ms, run) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (id) DO UPDATE SET waiting = EXCLUDED.waiting, \
                     updated_ms = EXCLUDED.updated_ms, run = EXCLUDED.run",
                    &[&run.id.as_str(), &run_waits(&run), &now, &to_text(&run)],
                )
                .await
                .map_err(self.failed())?;
            Ok(())
        })
    }

    fn take<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        Box::pin(async move {
            let text = self
                .text_of(
                    "DELETE FROM toolgate_runs WHERE id = $1 RETURNING run",
                    &[&id.as_str()],
                )
                .await?;
            text.map(|text| from_text(self.name(), "an agent run", &text))
                .transpose()
        })
    }

    fn get<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        Box::pin(async move {
            let text = self
                .text_of(
                    "SELECT run FROM toolgate_runs WHERE id = $1",
                    &[&id.as_str()],
                )
                .await?;
            text.map(|text| from_text(self.name(), "an agent run", &text))
                .transpose()
        })
    }
}
