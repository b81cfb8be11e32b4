//! Where audit records are kept to be read back: `history(caller, n)`, and for a database,
//! one hash-chained table that every instance of an application writes to.

use std::sync::Mutex;

use super::AuditRecord;
use super::chain::{ChainBreak, VerifiedChain};
use super::kept::KeptRecord;
use super::ring::Ring;
use crate::store::error::{StoreFuture, ready};
use crate::sync::lock;

/// Keeps audit records and reads them back. The registry awaits
/// [`append`](AuditStore::append) before it answers a call, so an answered call has its
/// record (see [`AuditMode`](super::AuditMode)).
///
/// Implementations: [`MemoryAuditStore`] (the default: the last records, in memory), and the
/// SQLite and PostgreSQL stores of [`crate::store`], which chain every record to the one
/// before it by its hash, across instances.
pub trait AuditStore: Send + Sync + 'static {
    /// Keeps a record; done once it is stored (for a database: committed).
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()>;
    /// The last `count` records of one caller (by id), newest first.
    fn history<'a>(&'a self, caller: &'a str, count: usize) -> StoreFuture<'a, Vec<AuditRecord>>;
    /// Checks every record's hash and the chain between them, if the store chains them.
    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>>;
}

impl<T: AuditStore + ?Sized> AuditStore for std::sync::Arc<T> {
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()> {
        (**self).append(record)
    }
    fn history<'a>(&'a self, caller: &'a str, count: usize) -> StoreFuture<'a, Vec<AuditRecord>> {
        (**self).history(caller, count)
    }
    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>> {
        (**self).verify()
    }
}

/// The last records of all callers, in memory (the default, 1,000 records; see
/// [`RegistryBuilder::history_capacity`](crate::RegistryBuilder::history_capacity)). Not
/// chained: it is a view of recent calls, not evidence; use a database store or a
/// [`JsonlFileSink`](super::JsonlFileSink) for that.
#[derive(Debug)]
pub struct MemoryAuditStore {
    capacity: usize,
    records: Mutex<Ring>,
}

impl MemoryAuditStore {
    /// Keeps the last `capacity` records of all callers.
    pub fn new(capacity: usize) -> Self {
        MemoryAuditStore {
            capacity,
            records: Mutex::new(Ring::with_capacity(capacity.min(4096))),
        }
    }
}

impl MemoryAuditStore {
    /// Keeps a record as the registry hands it over (see [`KeptRecord`]), its tool name and
    /// call id copied in. Once the history is full, the oldest record is overwritten where
    /// it lies, its strings' buffers reused: a call in the steady state allocates nothing
    /// here and moves no record.
    pub(crate) fn keep(&self, record: KeptRecord, tool: &str, call_id: &str) {
        if self.capacity == 0 {
            return;
        }
        let mut records = lock(&self.records);
        if records.len() < self.capacity {
            records.push(KeptRecord {
                tool: tool.to_owned(),
                call_id: call_id.to_owned(),
                ..record
            });
            return;
        }
        let Some(oldest) = records.oldest_to_overwrite() else {
            return;
        };
        let evicted = oldest.overwrite(record, tool, call_id);
        drop(records);
        // What the evicted record held alone is freed after the lock is released.
        drop(evicted);
    }
}

impl AuditStore for MemoryAuditStore {
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()> {
        let mut record = KeptRecord::from(record);
        let tool = std::mem::take(&mut record.tool);
        let call_id = std::mem::take(&mut record.call_id);
        self.keep(record, &tool, &call_id);
        ready(Ok(()))
    }

    fn history<'a>(&'a self, caller: &'a str, count: usize) -> StoreFuture<'a, Vec<AuditRecord>> {
        let records = lock(&self.records);
        let last = records
            .newest_first()
            .filter(|record| record.caller.id() == caller)
            .take(count)
            .map(KeptRecord::to_record)
            .collect();
        ready(Ok(last))
    }

    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>> {
        let records = lock(&self.records).len() as u64;
        ready(Ok(Ok(VerifiedChain {
            records,
            last_hash: None,
        })))
    }
}
