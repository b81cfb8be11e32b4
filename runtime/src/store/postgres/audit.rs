//! The audit chain in PostgreSQL: an append locks the chain's head row (`FOR UPDATE`), links
//! the record to it and moves the head, in one transaction, so concurrent writers on every
//! instance extend one chain in one order.

use tokio_postgres::IsolationLevel;
use tokio_postgres::types::ToSql;

use super::PostgresStore;
use crate::audit::{AuditRecord, AuditStore, ChainBreak, ChainChecker, Link, VerifiedChain, link};
use crate::store::StoreFuture;
use crate::store::rows::record_from_body;

const LOCK_HEAD: &str = "SELECT next_seq, hash FROM toolgate_audit_head WHERE id = 1 FOR UPDATE";
const INSERT: &str = "INSERT INTO toolgate_audit (seq, caller, body, hash) VALUES ($1, $2, $3, $4)";
const MOVE_HEAD: &str = "UPDATE toolgate_audit_head SET next_seq = $1, hash = $2 WHERE id = 1";

impl AuditStore for PostgresStore {
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await.map_err(self.failed())?;
            // Prepared once per connection, and the two writes sent together: the head row
            // stays locked for as few round trips as possible.
            let (head, insert, update) = tokio::try_join!(
                transaction.prepare_cached(LOCK_HEAD),
                transaction.prepare_cached(INSERT),
                transaction.prepare_cached(MOVE_HEAD),
            )
            .map_err(self.failed())?;
            let head = transaction
                .query_one(&head, &[])
                .await
                .map_err(self.failed())?;
            let (seq, prev_hash): (i64, String) = (head.get(0), head.get(1));
            let Link { body, hash } = link(&record, seq as u64, &prev_hash);
            let next = seq + 1;
            let row: [&(dyn ToSql + Sync); 4] = [&seq, &record.caller, &body, &hash];
            let head: [&(dyn ToSql + Sync); 2] = [&next, &hash];
            tokio::try_join!(
                transaction.execute(&insert, &row),
                transaction.execute(&update, &head),
            )
            .map_err(self.failed())?;
            transaction.commit().await.map_err(self.failed())
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
