//! The last calls, kept in memory, for "what did this caller just do?".

use std::collections::VecDeque;
use std::sync::Mutex;

use super::AuditRecord;
use crate::sync::lock;

/// A bounded, in-memory record of recent calls; the registry keeps one
/// ([`Registry::history`](crate::Registry::history)).
#[derive(Debug)]
pub(crate) struct History {
    capacity: usize,
    records: Mutex<VecDeque<AuditRecord>>,
}

impl History {
    /// Keeps the last `capacity` records of all callers.
    pub(crate) fn new(capacity: usize) -> Self {
        History {
            capacity,
            records: Mutex::new(VecDeque::with_capacity(capacity.min(4096))),
        }
    }

    /// Whether it keeps any record at all.
    pub(crate) fn keeps_any(&self) -> bool {
        self.capacity > 0
    }

    /// The last `count` records of one caller, newest first.
    pub(crate) fn last_for(&self, caller: &str, count: usize) -> Vec<AuditRecord> {
        let records = lock(&self.records);
        records
            .iter()
            .rev()
            .filter(|record| record.caller == caller)
            .take(count)
            .cloned()
            .collect()
    }

    /// Keeps a record, dropping the oldest when full.
    pub(crate) fn push(&self, record: AuditRecord) {
        if self.capacity == 0 {
            return;
        }
        let mut records = lock(&self.records);
        if records.len() == self.capacity {
            records.pop_front();
        }
        records.push_back(record);
    }
}
