//! Pending calls in PostgreSQL: `take` is one `DELETE ... RETURNING`, so of concurrent
//! redemptions on any number of instances, exactly one gets the call.

use super::PostgresStore;
use crate::approval::{DecidedCall, PendingCall, PendingStore};
use crate::store::StoreFuture;
use crate::store::rows::{from_text, pending_from_text, pending_to_text, to_text};

impl PendingStore for PostgresStore {
    fn put(&self, call: PendingCall) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            let now = crate::util::time::now_secs() as i64;
            // Bounded retention: what expired goes when something new comes.
            client
                .execute("DELETE FROM toolgate_pending WHERE expires <= $1", &[&now])
                .await
                .map_err(self.failed())?;
            client
                .execute(
                    "DELETE FROM toolgate_decided WHERE keep_until <= $1",
                    &[&now],
                )
                .await
                .map_err(self.failed())?;
            client
                .execute(
                    "INSERT INTO toolgate_pending (ticket_id, expires, call) VALUES ($1, $2, $3) \
                     ON CONFLICT (ticket_id) DO UPDATE SET expires = EXCLUDED.expires, call = EXCLUDED.call",
                    &[&call.ticket_id, &(call.expires as i64), &pending_to_text(&call)],
                )
                .await
                .map_err(self.failed())?;
            Ok(())
        })
    }

    fn take<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        Box::pin(async move {
            let now = crate::util::time::now_secs() as i64;
            let text = self.text_of("DELETE FROM toolgate_pending WHERE ticket_id = $1 AND expires > $2 RETURNING call", &[&ticket_id, &now]).await?;
            text.map(|text| pending_from_text(self.name(), &text))
                .transpose()
        })
    }

    fn get<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<PendingCall>> {
        Box::pin(async move {
            let now = crate::util::time::now_secs() as i64;
            let text = self
                .text_of(
                    "SELECT call FROM toolgate_pending WHERE ticket_id = $1 AND expires > $2",
                    &[&ticket_id, &now],
                )
                .await?;
            text.map(|text| pending_from_text(self.name(), &text))
                .transpose()
        })
    }

    fn list(&self) -> StoreFuture<'_, Vec<PendingCall>> {
        Box::pin(async move {
            let client = self.client().await?;
            let now = crate::util::time::now_secs() as i64;
            let rows = client
                .query(
                    "SELECT call FROM toolgate_pending WHERE expires > $1 ORDER BY ticket_id",
                    &[&now],
                )
                .await
                .map_err(self.failed())?;
            rows.iter()
                .map(|row| pending_from_text(self.name(), row.get(0)))
                .collect()
        })
    }

    fn put_decided<'a>(&'a self, ticket_id: &'a str, decided: DecidedCall) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute(
                    "INSERT INTO toolgate_decided (ticket_id, keep_until, decided) VALUES ($1, $2, $3) \
                     ON CONFLICT (ticket_id) DO UPDATE SET keep_until = EXCLUDED.keep_until, decided = EXCLUDED.decided",
                    &[&ticket_id, &(decided.keep_until as i64), &to_text(&decided)],
                )
                .await
                .map_err(self.failed())?;
            Ok(())
        })
    }

    fn decided<'a>(&'a self, ticket_id: &'a str) -> StoreFuture<'a, Option<DecidedCall>> {
        Box::pin(async move {
            let now = crate::util::time::now_secs() as i64;
            let text = self
                .text_of(
                    "SELECT decided FROM toolgate_decided WHERE ticket_id = $1 AND keep_until > $2",
                    &[&ticket_id, &now],
                )
                .await?;
            text.map(|text| from_text(self.name(), "a decided call", &text))
                .transpose()
        })
    }
}
