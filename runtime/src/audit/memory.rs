//! The default audit store: the last records of all callers, in memory, kept in parts of
//! their own per writing thread so that calls on different threads do not wait for one
//! another (nor pass the same cache lines back and forth).

use std::cmp::Reverse;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::AuditRecord;
use super::chain::{ChainBreak, VerifiedChain};
use super::kept::{CallArguments, CopiedRecord, Facts, KeptRecord, Names, Whole};
use super::readers::Readers;
use super::ring::Ring;
use super::store::AuditStore;
use crate::store_error::{StoreFuture, ready};

/// The last records of all callers, in memory (the default, 1,000 records; see
/// [`RegistryBuilder::history_capacity`](crate::RegistryBuilder::history_capacity)). Not
/// chained: it is a view of recent calls, not evidence; use a database store or a
/// [`JsonlFileSink`](super::JsonlFileSink) for that.
///
/// Reads see the last `capacity` records of all threads, newest first. So that threads
/// do not wait for each other, each thread writes to a part of its own (one per core, at
/// most 8), which keeps its own last `capacity`: memory holds up to that many times
/// `capacity` records.
///
/// ```
/// use toolgate::audit::{AuditRecord, AuditStore, MemoryAuditStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryAuditStore::new(2);
/// for call_id in ["1", "2", "3"] {
///     let record = AuditRecord {
///         time_ms: 0,
///         caller: "ann".into(),
///         issuer: None,
///         role: "staff".into(),
///         tool: "add".into(),
///         call_id: call_id.into(),
///         arguments: serde_json::json!({}),
///         decision: "allow".into(),
///         approver: None,
///         outcome: "ok".into(),
///         duration_ms: 1.0,
///     };
///     store.append(record).await.unwrap();
/// }
/// let last = store.history("ann", 10).await.unwrap();
/// let ids: Vec<&str> = last.iter().map(|record| record.call_id.as_str()).collect();
/// assert_eq!(ids, ["3", "2"]);
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryAuditStore {
    capacity: usize,
    parts: Box<[Part]>,
}

/// One writing thread's records, on cache lines no other part shares.
#[derive(Debug)]
#[repr(align(128))]
struct Part(PartLock<Ring>);

/// The lock of a part: held by a writer for one record's overwrite, by a reader to pick
/// and copy records (never to parse them), so a thread that finds it taken yields and
/// tries again rather than sleeping. Not `std`'s mutex, whose unlock is an atomic swap (it
/// must learn whether anyone sleeps): a swap waits for every store before it to reach
/// the cache, the whole record just written included, and that wait measured 5–10 ns of
/// each call; this lock lets go with a plain store.
type PartLock<T> = spin::mutex::SpinMutex<T, spin::relax::Yield>;

impl MemoryAuditStore {
    /// Keeps the last `capacity` records of all callers (none for 0).
    pub fn new(capacity: usize) -> Self {
        let parts = if capacity == 0 { 0 } else { part_count() };
        MemoryAuditStore {
            capacity,
            parts: (0..parts)
                .map(|_| Part(PartLock::new(Ring::new(capacity))))
                .collect(),
        }
    }

    /// Keeps a record as the registry hands it over: its facts, names and arguments. Once a
    /// part is full, its oldest record is overwritten where it lies: a call in the steady
    /// state allocates nothing here and moves no record (what the old record held alone,
    /// its text, is freed under the part's lock, which readers and threads beyond the
    /// parts' count contend for).
    pub(crate) fn keep(&self, facts: Facts, names: Names<'_>, arguments: CallArguments<'_>) {
        // No parts when no records are kept; else one per `part_count`.
        let Some(part) = self.parts.get(this_threads_part()) else {
            return;
        };
        let released = part.0.lock().keep(facts, names, arguments);
        // A reader let go may be its tool's last reference: dropped after the lock.
        drop(released);
    }

    /// Picks from the last `capacity` records of all parts, newest first (every part
    /// locked meanwhile, so that the records are those of one moment): `pick` copies what
    /// it needs, to be read after the locks are let go.
    fn read_newest<T>(&self, pick: impl FnOnce(Vec<(&KeptRecord, &Readers)>) -> T) -> T {
        let parts: Vec<_> = self.parts.iter().map(|part| part.0.lock()).collect();
        let mut records: Vec<(&KeptRecord, &Readers)> = parts
            .iter()
            .flat_map(|ring| ring.newest_first().map(|record| (record, ring.readers())))
            .collect();
        // Stable: records of one part that ended at the same nanosecond stay as they came.
        records.sort_by_key(|(record, _)| Reverse(record.facts.order));
        records.truncate(self.capacity);
        pick(records)
    }
}

/// One part per core, up to 8: beyond that, threads share parts.
fn part_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |cores| cores.get())
            .clamp(1, 8)
    })
}

/// The part this thread writes to: threads take the parts in turn, in the order they first
/// write a record (worked out once per thread, not per record).
fn this_threads_part() -> usize {
    static WRITERS: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static PART: usize = WRITERS.fetch_add(1, Ordering::Relaxed) % part_count();
    }
    PART.with(|part| *part)
}

impl AuditStore for MemoryAuditStore {
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()> {
        let Whole {
            facts,
            names: [caller, role, tool, call_id],
            issuer,
            arguments,
        } = Whole::from(record);
        let names = Names {
            caller: &caller,
            role: &role,
            tool: &tool,
            call_id: &call_id,
            issuer: issuer.as_ref(),
        };
        self.keep(facts, names, CallArguments::Value(arguments));
        ready(Ok(()))
    }

    fn history<'a>(&'a self, caller: &'a str, count: usize) -> StoreFuture<'a, Vec<AuditRecord>> {
        let copied: Vec<CopiedRecord> = self.read_newest(|records| {
            records
                .into_iter()
                .filter(|(record, _)| record.caller == caller)
                .take(count)
                .map(|(record, readers)| record.copied(readers))
                .collect()
        });
        // Read back here, where no writer waits for it.
        let last = copied.into_iter().map(CopiedRecord::into_record).collect();
        ready(Ok(last))
    }

    /// All it holds in one page, oldest first (positions count from the oldest kept now).
    fn records_after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<(u64, AuditRecord)>> {
        if after > 0 {
            return ready(Ok(Vec::new()));
        }
        let copied: Vec<CopiedRecord> = self.read_newest(|records| {
            let newest = records.into_iter().take(limit);
            newest
                .map(|(record, readers)| record.copied(readers))
                .collect()
        });
        let oldest_first = copied.into_iter().rev().map(CopiedRecord::into_record);
        ready(Ok((1..).zip(oldest_first).collect()))
    }

    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>> {
        let records = self.read_newest(|records| records.len()) as u64;
        ready(Ok(Ok(VerifiedChain {
            records,
            last_hash: None,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::kept::{ReadBack, Reader};
    use crate::audit::test_record as record;
    use std::sync::Arc;

    fn ids(records: &[AuditRecord]) -> Vec<&str> {
        records
            .iter()
            .map(|record| record.call_id.as_str())
            .collect()
    }

    #[tokio::test]
    async fn reads_see_the_newest_records_of_all_threads_together() {
        let store = Arc::new(MemoryAuditStore::new(4));
        // Three threads, one after another (each its own part, where there are parts
        // enough): the newest four of all come back, newest first.
        for batch in [["1", "2"], ["3", "4"], ["5", "6"]] {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                for call_id in batch {
                    runtime
                        .block_on(store.append(record("ann", call_id)))
                        .unwrap();
                }
            })
            .join()
            .unwrap();
        }
        store.append(record("bob", "7")).await.unwrap();
        assert_eq!(
            ids(&store.history("ann", 10).await.unwrap()),
            ["6", "5", "4"]
        );
        assert_eq!(ids(&store.history("ann", 2).await.unwrap()), ["6", "5"]);
        assert_eq!(ids(&store.history("bob", 10).await.unwrap()), ["7"]);
        assert_eq!(store.verify().await.unwrap().unwrap().records, 4);
    }

    #[tokio::test]
    async fn a_store_of_no_records_keeps_none() {
        let store = MemoryAuditStore::new(0);
        store.append(record("ann", "1")).await.unwrap();
        assert!(store.history("ann", 10).await.unwrap().is_empty());
        assert_eq!(store.verify().await.unwrap().unwrap().records, 0);
    }

    /// Reads text back by first having records kept from as many threads as there are
    /// parts (which threads take in turn): with the parts locked, that would never end.
    struct WritesWhileReading {
        store: Arc<MemoryAuditStore>,
    }

    impl ReadBack for WritesWhileReading {
        fn read_back(&self, text: &str) -> serde_json::Value {
            let (done, written) = std::sync::mpsc::channel();
            for part in 0..part_count() {
                let store = Arc::clone(&self.store);
                let done = done.clone();
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .unwrap();
                    let call_id = format!("written while reading {part}");
                    runtime
                        .block_on(store.append(record("bob", &call_id)))
                        .unwrap();
                    done.send(()).unwrap();
                });
            }
            for _ in 0..part_count() {
                // Generous: a writer that waits for this reader never comes back at all.
                let wrote = written.recv_timeout(std::time::Duration::from_secs(30));
                assert!(wrote.is_ok(), "a writer waited for a reader's read-back");
            }
            serde_json::Value::String(text.to_owned())
        }
    }

    impl ReadBack for Arc<WritesWhileReading> {
        fn read_back(&self, text: &str) -> serde_json::Value {
            self.as_ref().read_back(text)
        }
    }

    impl Reader for Arc<WritesWhileReading> {
        fn key(&self) -> usize {
            Arc::as_ptr(self).addr()
        }

        fn share(&self) -> Arc<dyn ReadBack> {
            Arc::clone(self) as Arc<dyn ReadBack>
        }
    }

    #[tokio::test]
    async fn text_is_read_back_after_the_parts_are_let_go() {
        let store = Arc::new(MemoryAuditStore::new(16));
        let reader = Arc::new(WritesWhileReading {
            store: Arc::clone(&store),
        });
        let whole = Whole::from(record("ann", "1"));
        let [caller, role, tool, call_id] = &whole.names;
        let names = Names {
            caller,
            role,
            tool,
            call_id,
            issuer: None,
        };
        let text = CallArguments::Text {
            text: r#"{"a":1}"#.to_owned(),
            reader: &reader,
        };
        store.keep(whole.facts, names, text);

        let read = store.history("ann", 10).await.unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].arguments, r#"{"a":1}"#);
        let written = store.history("bob", 10).await.unwrap();
        assert_eq!(written.len(), part_count(), "every writer's record is kept");
    }

    #[test]
    fn threads_take_the_parts_in_turn_and_keep_theirs() {
        let parts: Vec<usize> = (0..3)
            .map(|_| std::thread::spawn(this_threads_part).join().unwrap())
            .collect();
        assert_eq!(
            this_threads_part(),
            this_threads_part(),
            "a thread keeps its part"
        );
        assert!(parts.iter().all(|part| *part < part_count()), "{parts:?}");
        assert!((1..=8).contains(&part_count()));
    }
}
