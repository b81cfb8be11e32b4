//! The in-memory history's records: appended until the history is full, then each new
//! record overwrites the oldest where it lies (nothing is moved to make room).

use super::kept::KeptRecord;

/// Records in the order they came, wrapped around once full.
#[derive(Debug)]
pub(crate) struct Ring {
    records: Vec<KeptRecord>,
    /// Where the oldest record lies once the ring is full: the next one overwritten.
    oldest: usize,
}

impl Ring {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Ring {
            records: Vec::with_capacity(capacity),
            oldest: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Adds a record to a ring that is not full yet.
    pub(crate) fn push(&mut self, record: KeptRecord) {
        self.records.push(record);
    }

    /// The oldest record of a full ring, which the caller overwrites: from then on it is
    /// the newest. `None` for an empty ring.
    pub(crate) fn oldest_to_overwrite(&mut self) -> Option<&mut KeptRecord> {
        let oldest = self.oldest;
        if oldest >= self.records.len() {
            return None;
        }
        self.oldest = if oldest + 1 == self.records.len() {
            0
        } else {
            oldest + 1
        };
        Some(&mut self.records[oldest])
    }

    /// The records, newest first.
    pub(crate) fn newest_first(&self) -> impl Iterator<Item = &KeptRecord> {
        let (wrapped, older) = self.records.split_at(self.oldest);
        wrapped.iter().rev().chain(older.iter().rev())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::AuditRecord;

    fn record(call_id: &str) -> KeptRecord {
        KeptRecord::from(AuditRecord {
            time_ms: 0,
            caller: "ann".into(),
            role: "staff".into(),
            tool: "add".into(),
            call_id: call_id.into(),
            arguments: serde_json::json!({}),
            decision: "allow".into(),
            approver: None,
            outcome: "ok".into(),
            duration_ms: 0.0,
        })
    }

    fn ids(ring: &Ring) -> Vec<String> {
        let records = ring.newest_first();
        records.map(|record| record.call_id.clone()).collect()
    }

    /// Fills a ring of three with `count` records the way the history does.
    fn filled(count: usize) -> Ring {
        let mut ring = Ring::with_capacity(3);
        for n in 0..count {
            let id = n.to_string();
            if ring.len() < 3 {
                ring.push(record(&id));
            } else {
                let oldest = ring.oldest_to_overwrite().expect("a full ring has records");
                drop(oldest.overwrite(record(""), "add", &id));
            }
        }
        ring
    }

    #[test]
    fn records_come_back_newest_first_before_and_after_wrapping() {
        assert!(ids(&filled(0)).is_empty());
        assert_eq!(ids(&filled(2)), ["1", "0"]);
        assert_eq!(ids(&filled(3)), ["2", "1", "0"]);
        assert_eq!(ids(&filled(4)), ["3", "2", "1"]);
        assert_eq!(ids(&filled(5)), ["4", "3", "2"]);
        assert_eq!(ids(&filled(6)), ["5", "4", "3"]);
        assert_eq!(ids(&filled(10)), ["9", "8", "7"]);
        assert_eq!(filled(10).len(), 3);
    }

    #[test]
    fn an_empty_ring_has_nothing_to_overwrite() {
        assert!(Ring::with_capacity(3).oldest_to_overwrite().is_none());
    }
}
