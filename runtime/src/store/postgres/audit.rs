//! The audit chain in PostgreSQL: the records waiting at the same moment in an instance are
//! appended together (a group commit), in one statement, one round trip: a function
//! (created with the tables) locks the chain's head row (`FOR UPDATE`), links each record to
//! the one before exactly as `audit::link` does, inserts it and moves the head, so concurrent
//! writers on every instance extend one chain in one order, and the head is held only while
//! the server works, never across a round trip.

use tokio_postgres::IsolationLevel;
use tokio_postgres::types::ToSql;

use super::PostgresStore;
use crate::audit::{AuditRecord, AuditStore, ChainBreak, ChainChecker, VerifiedChain, unlinked};
use crate::store::StoreError;
use crate::store::StoreFuture;
use crate::store::rows::record_from_body;

const APPEND: &str =
    "SELECT toolgate_audit_append_v1($1::text[], $2::text[], $3::text[], $4::text[])";

impl PostgresStore {
    /// Appends `records`, in order, in one statement: all of them or none.
    async fn append_all(self, records: Vec<AuditRecord>) -> Result<(), StoreError> {
        let (mut callers, mut firsts, mut middles, mut lasts) = (
            Vec::with_capacity(records.len()),
            Vec::with_capacity(records.len()),
            Vec::with_capacity(records.len()),
            Vec::with_capacity(records.len()),
        );
        for record in records {
            let parts = unlinked(&record);
            callers.push(record.caller);
            firsts.push(parts.first);
            middles.push(parts.middle);
            lasts.push(parts.last);
        }
        let client = self.client().await?;
        let append = client.prepare_cached(APPEND).await.map_err(self.failed())?;
        let parts: [&(dyn ToSql + Sync); 4] = [&callers, &firsts, &middles, &lasts];
        client
            .execute(&append, &parts)
            .await
            .map_err(self.failed())?;
        Ok(())
    }
}

impl AuditStore for PostgresStore {
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()> {
        let store = self.clone();
        Box::pin(async move {
            let appending = &self.inner.appending;
            appending
                .submit(record, move |records| store.append_all(records))
                .await
        })
    }

    fn history<'a>(&'a self, caller: &'a str, count: usize) -> StoreFuture<'a, Vec<AuditRecord>> {
        Box::pin(async move {
            let client = self.client().await?;
            let count = count.min(i64::MAX as usize) as i64;
            let rows = client
                .query(
                    "SELECT body FROM toolgate_audit WHERE caller = $1 ORDER BY seq DESC LIMIT $2",
                    &[&caller, &count],
                )
                .await
                .map_err(self.failed())?;
            rows.iter()
                .map(|row| record_from_body(self.name(), row.get(0)))
                .collect()
        })
    }

    fn records_after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<(u64, AuditRecord)>> {
        Box::pin(async move {
            let client = self.client().await?;
            let (after, limit) = (
                after.min(i64::MAX as u64) as i64,
                limit.min(i64::MAX as usize) as i64,
            );
            let rows = client
                .query(
                    "SELECT seq, body FROM toolgate_audit WHERE seq >= $1 ORDER BY seq LIMIT $2",
                    &[&after, &limit],
                )
                .await
                .map_err(self.failed())?;
            rows.iter()
                .map(|row| {
                    let seq: i64 = row.get(0);
                    Ok((seq as u64 + 1, record_from_body(self.name(), row.get(1))?))
                })
                .collect()
        })
    }

    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            // One snapshot of head and records while writers go on.
            let transaction = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(self.failed())?;
            let head = transaction
                .query_one(
                    "SELECT next_seq, hash FROM toolgate_audit_head WHERE id = 1",
                    &[],
                )
                .await
                .map_err(self.failed())?;
            let (next_seq, head_hash): (i64, String) = (head.get(0), head.get(1));
            let rows = transaction
                .query(
                    "SELECT seq, caller, body, hash FROM toolgate_audit ORDER BY seq",
                    &[],
                )
                .await
                .map_err(self.failed())?;
            let mut checker = ChainChecker::default();
            for row in &rows {
                let seq = row.get::<_, i64>(0) as u64;
                if let Err(broken) = checker.next(seq, row.get(2), row.get(3), row.get(1)) {
                    return Ok(Err(broken));
                }
            }
            Ok(checker.finish(Some((next_seq as u64, head_hash.as_str()))))
        })
    }
}
