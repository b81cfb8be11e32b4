//! "Always" grants in PostgreSQL.

use super::PostgresStore;
use crate::approval::{Grant, GrantStore};
use crate::store::StoreFuture;

impl GrantStore for PostgresStore {
    fn grant(&self, grant: Grant) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute(
                    "INSERT INTO toolgate_grants (caller, tool, granted_by, time_ms) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (caller, tool) DO UPDATE SET granted_by = EXCLUDED.granted_by, time_ms = EXCLUDED.time_ms",
                    &[&grant.caller, &grant.tool, &grant.granted_by, &(grant.time_ms as i64)],
                )
                .await
                .map_err(self.failed())?;
            Ok(())
        })
    }

    fn granted<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "SELECT 1 FROM toolgate_grants WHERE caller = $1 AND tool = $2",
                    &[&caller, &tool],
                )
                .await
                .map_err(self.failed())?;
            Ok(row.is_some())
        })
    }

    fn revoke<'a>(&'a self, caller: &'a str, tool: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let client = self.client().await?;
            let removed = client
                .execute(
                    "DELETE FROM toolgate_grants WHERE caller = $1 AND tool = $2",
                    &[&caller, &tool],
                )
                .await
                .map_err(self.failed())?;
            Ok(removed > 0)
        })
    }

    fn list(&self) -> StoreFuture<'_, Vec<Grant>> {
        Box::pin(async move {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT caller, tool, granted_by, time_ms FROM toolgate_grants ORDER BY caller, tool",
                    &[],
                )
                .await
                .map_err(self.failed())?;
            let grants = rows
                .iter()
                .map(|row| Grant {
                    caller: row.get(0),
                    tool: row.get(1),
                    granted_by: row.get(2),
                    time_ms: row.get::<_, i64>(3) as u64,
                })
                .collect();
            Ok(grants)
        })
    }
}
