//! Where audit records are kept to be read back: `history(caller, n)`, and for a database,
//! one hash-chained table that every instance of an application writes to.

use super::AuditRecord;
use super::chain::{ChainBreak, VerifiedChain};
use crate::store_error::StoreFuture;

/// Keeps audit records and reads them back. The registry awaits
/// [`append`](AuditStore::append) before it answers a call, so an answered call has its
/// record (see [`AuditMode`](super::AuditMode)).
///
/// Implementations: [`MemoryAuditStore`](super::MemoryAuditStore) (the default: the last records, in memory), and the
/// SQLite and PostgreSQL stores of [`crate::store`], which chain every record to the one
/// before it by its hash, across instances.
pub trait AuditStore: Send + Sync + 'static {
    /// Keeps a record; done once it is stored (for a database: committed).
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()>;
    /// The last `count` records of one caller (by id), newest first.
    fn history<'a>(&'a self, caller: &'a str, count: usize) -> StoreFuture<'a, Vec<AuditRecord>>;
    /// Checks every record's hash and the chain between them, if the store chains them.
    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>>;

    /// Records in the order they were kept, after position `after` (0: from the first),
    /// at most `limit`, each with its position: what [usage figures](crate::Registry::usage)
    /// are counted from. A store that cannot list its records says so (the default).
    fn records_after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<(u64, AuditRecord)>> {
        let _ = (after, limit);
        crate::store_error::ready(Err(crate::store_error::StoreError::unavailable(
            "the audit store",
            "it cannot list its records, so usage cannot be counted from it",
        )))
    }
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
    fn records_after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<(u64, AuditRecord)>> {
        (**self).records_after(after, limit)
    }
}
