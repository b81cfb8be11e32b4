//! The audit chain in SQLite: each append reads the chain's head, links the record to it
//! and moves the head, in one immediate transaction, so writers in several processes extend
//! one chain without forking it.

use rusqlite::{TransactionBehavior, params};

use super::{SqliteStore, failed};
use crate::audit::{AuditRecord, AuditStore, ChainBreak, ChainChecker, Link, VerifiedChain, link};
use crate::store::StoreFuture;
use crate::store::rows::record_from_body;

impl AuditStore for SqliteStore {
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()> {
        self.run(move |connection, name| {
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(failed(name))?;
            let (seq, prev_hash): (i64, String) = transaction
                .query_row(
                    "SELECT next_seq, hash FROM toolgate_audit_head WHERE id = 1",
                    [],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .map_err(failed(name))?;
            let Link { body, hash } = link(&record, seq as u64, &prev_hash);
            transaction
                .execute(
                    "INSERT INTO toolgate_audit (seq, caller, body, hash) VALUES (?1, ?2, ?3, ?4)",
                    params![seq, record.caller, body, hash],
                )
                .map_err(failed(name))?;
            transaction
                .execute(
                    "UPDATE toolgate_audit_head SET next_seq = ?1, hash = ?2 WHERE id = 1",
                    params![seq + 1, hash],
                )
                .map_err(failed(name))?;
            transaction.commit().map_err(failed(name))
        })
    }

    fn history<'a>(&'a self, caller: &'a str, count: usize) -> StoreFuture<'a, Vec<AuditRecord>> {
        let caller = caller.to_owned();
        let count = count.min(i64::MAX as usize) as i64;
        self.run(move |connection, name| {
            let mut statement = connection
                .prepare(
                    "SELECT body FROM toolgate_audit WHERE caller = ?1 ORDER BY seq DESC LIMIT ?2",
                )
                .map_err(failed(name))?;
            let bodies = statement
                .query_map(params![caller, count], |row| row.get::<_, String>(0))
                .map_err(failed(name))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(failed(name))?;
            bodies
                .iter()
                .map(|body| record_from_body(name, body))
                .collect()
        })
    }

    fn records_after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<(u64, AuditRecord)>> {
        let (after, limit) = (
            after.min(i64::MAX as u64) as i64,
            limit.min(i64::MAX as usize) as i64,
        );
        self.run(move |connection, name| {
            let mut statement = connection
                .prepare_cached(
                    "SELECT seq, body FROM toolgate_audit WHERE seq >= ?1 ORDER BY seq LIMIT ?2",
                )
                .map_err(failed(name))?;
            let rows = statement
                .query_map(params![after, limit], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
                })
                .map_err(failed(name))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(failed(name))?;
            rows.iter()
                .map(|(seq, body)| Ok((*seq as u64 + 1, record_from_body(name, body)?)))
                .collect()
        })
    }

    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>> {
        self.run(move |connection, name| {
            // One read transaction: a consistent view while writers go on.
            let transaction = connection.transaction().map_err(failed(name))?;
            let (next_seq, head_hash): (i64, String) = transaction
                .query_row(
                    "SELECT next_seq, hash FROM toolgate_audit_head WHERE id = 1",
                    [],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .map_err(failed(name))?;
            let mut statement = transaction
                .prepare("SELECT seq, caller, body, hash FROM toolgate_audit ORDER BY seq")
                .map_err(failed(name))?;
            let mut rows = statement.query([]).map_err(failed(name))?;
            let mut checker = ChainChecker::default();
            while let Some(row) = rows.next().map_err(failed(name))? {
                let read = |index| row.get::<_, String>(index).map_err(failed(name));
                let seq = row.get::<_, i64>(0).map_err(failed(name))? as u64;
                if let Err(broken) = checker.next(seq, &read(2)?, &read(3)?, &read(1)?) {
                    return Ok(Err(broken));
                }
            }
            Ok(checker.finish(Some((next_seq as u64, head_hash.as_str()))))
        })
    }
}
