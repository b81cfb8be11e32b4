//! Sign-in sessions in PostgreSQL, shared by every instance.

use super::PostgresStore;
use crate::store::{SessionStore, StoreFuture};
use crate::util::time::now_millis;

impl SessionStore for PostgresStore {
    fn put(&self, key: String, value: String, expires_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute(
                    "DELETE FROM toolgate_sessions WHERE expires < $1",
                    &[&(now_millis() as i64)],
                )
                .await
                .map_err(self.failed())?;
            client
                .execute(
                    "INSERT INTO toolgate_sessions (key, expires, value) VALUES ($1, $2, $3) \
                     ON CONFLICT (key) DO UPDATE SET expires = EXCLUDED.expires, value = EXCLUDED.value",
                    &[&key, &(expires_ms as i64), &value],
                )
                .await
                .map_err(self.failed())?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            let sql = "SELECT value FROM toolgate_sessions WHERE key = $1 AND expires > $2";
            self.text_of(sql, &[&key, &(now_millis() as i64)]).await
        })
    }

    fn take<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "DELETE FROM toolgate_sessions WHERE key = $1 RETURNING \
                     CASE WHEN expires > $2 THEN value END",
                    &[&key, &(now_millis() as i64)],
                )
                .await
                .map_err(self.failed())?;
            Ok(row.and_then(|row| row.get(0)))
        })
    }
}
