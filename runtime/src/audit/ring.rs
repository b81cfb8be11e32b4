//! A part of the in-memory history: records appended until it holds its capacity, then each
//! new record overwrites the oldest where it lies (nothing is moved to make room).

use std::sync::Arc;

use super::kept::{CallArguments, Facts, KeptArguments, KeptRecord, Names, ReadBack};
use super::readers::Readers;

/// Records in the order they came, wrapped around once full.
#[derive(Debug)]
pub(crate) struct Ring {
    records: Vec<KeptRecord>,
    capacity: usize,
    /// Where the oldest record lies once the ring is full: the next one overwritten.
    oldest: usize,
    /// What reads the records' text back.
    readers: Readers,
}

impl Ring {
    /// An empty ring that will hold up to `capacity` records (its room is taken as they
    /// come, not at once).
    pub(crate) fn new(capacity: usize) -> Self {
        Ring {
            records: Vec::new(),
            capacity,
            oldest: 0,
            readers: Readers::default(),
        }
    }

    /// Keeps the record of `facts`, `names` and `arguments`; once full, written over the
    /// oldest record where it lies. Gives back a reader no record uses any more, to be
    /// dropped after the lock.
    #[inline]
    pub(crate) fn keep(
        &mut self,
        facts: Facts,
        names: Names<'_>,
        arguments: CallArguments<'_>,
    ) -> Option<Arc<dyn ReadBack>> {
        if self.capacity == 0 {
            return None;
        }
        if self.records.len() < self.capacity {
            let arguments = KeptArguments::kept(arguments, &mut self.readers);
            self.records.push(KeptRecord::new(facts, names, arguments));
            return None;
        }
        let oldest = self.records.get_mut(self.oldest)?;
        let released = oldest.overwrite(facts, names, arguments, &mut self.readers);
        // Wrapped by a comparison, not a remainder: a division costs tens of cycles.
        self.oldest += 1;
        if self.oldest == self.records.len() {
            self.oldest = 0;
        }
        released
    }

    /// The records, newest first.
    pub(crate) fn newest_first(&self) -> impl Iterator<Item = &KeptRecord> {
        let (wrapped, older) = self.records.split_at(self.oldest);
        wrapped.iter().rev().chain(older.iter().rev())
    }

    /// What reads the records' text back.
    pub(crate) fn readers(&self) -> &Readers {
        &self.readers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::kept::Whole;
    use crate::audit::test_record;
    use smol_str::SmolStr;

    fn record() -> Facts {
        Whole::from(test_record("", "")).facts
    }

    static ANN: SmolStr = SmolStr::new_static("ann");
    static STAFF: SmolStr = SmolStr::new_static("staff");
    static ADD: SmolStr = SmolStr::new_static("add");

    fn names(call_id: &SmolStr) -> Names<'_> {
        Names {
            caller: &ANN,
            role: &STAFF,
            tool: &ADD,
            call_id,
            issuer: None,
        }
    }

    /// The newest record's arguments, read back as a reader of the history reads them.
    fn newest_arguments(ring: &Ring) -> serde_json::Value {
        let newest = ring.newest_first().next().unwrap();
        newest.copied(ring.readers()).into_record().arguments
    }

    fn ids(ring: &Ring) -> Vec<String> {
        let records = ring.newest_first();
        records.map(|record| record.call_id.to_string()).collect()
    }

    /// A ring of three after `count` records.
    fn filled(count: usize) -> Ring {
        let mut ring = Ring::new(3);
        for n in 0..count {
            let released = ring.keep(
                record(),
                names(&n.to_string().into()),
                CallArguments::default(),
            );
            assert!(released.is_none(), "no reader to let go (record {n})");
            assert_eq!(ring.records.len(), (n + 1).min(3), "record {n}");
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
        assert_eq!(filled(10).newest_first().count(), 3);
    }

    #[test]
    fn a_ring_of_no_records_keeps_none() {
        let mut ring = Ring::new(0);
        assert!(
            ring.keep(record(), names(&"1".into()), CallArguments::default())
                .is_none()
        );
        assert_eq!(ring.newest_first().count(), 0);
    }

    #[test]
    fn an_overwritten_record_takes_every_name_of_the_new_one() {
        let mut ring = filled(3);
        let names = Names {
            caller: &"bob".into(),
            role: &"admin".into(),
            tool: &"search".into(),
            call_id: &"x".into(),
            issuer: None,
        };
        assert!(
            ring.keep(record(), names, CallArguments::default())
                .is_none()
        );
        let newest = ring.newest_first().next().unwrap();
        let kept = [&newest.caller, &newest.role, &newest.tool, &newest.call_id];
        assert_eq!(kept, ["bob", "admin", "search", "x"]);
    }

    #[test]
    fn a_reader_is_held_once_for_all_its_texts_and_let_go_with_the_last() {
        let shout = Arc::new(crate::audit::readers::Shout);
        let text = |text: &str| CallArguments::Text {
            text: text.to_owned(),
            reader: &shout,
        };
        let mut ring = Ring::new(2);
        assert!(
            ring.keep(record(), names(&"1".into()), text("one"))
                .is_none()
        );
        assert!(
            ring.keep(record(), names(&"2".into()), text("two"))
                .is_none()
        );
        assert_eq!(
            Arc::strong_count(&shout),
            2,
            "one reference for both records"
        );
        assert_eq!(ring.readers().len(), 1);

        assert_eq!(newest_arguments(&ring), "TWO");

        // Text over text: written in place, the reader still held by both.
        let released = ring.keep(record(), names(&"3".into()), text("three"));
        assert!(released.is_none(), "records 2 and 3 read with it");
        assert_eq!(Arc::strong_count(&shout), 2);
        assert_eq!(ring.readers().len(), 1);
        assert_eq!(newest_arguments(&ring), "THREE");

        let value = || CallArguments::Value(serde_json::json!({"n": 1}));
        let released = ring.keep(record(), names(&"4".into()), value());
        assert!(released.is_none(), "record 3 still reads with it");
        assert_eq!(Arc::strong_count(&shout), 2);
        let released = ring.keep(record(), names(&"5".into()), value());
        assert!(
            released.is_some(),
            "the last record that read with it is gone"
        );
        drop(released);
        assert_eq!(Arc::strong_count(&shout), 1);
        assert_eq!(ring.readers().len(), 0);
        assert_eq!(newest_arguments(&ring), serde_json::json!({"n": 1}));

        // Held again when a text comes back over a value.
        assert!(
            ring.keep(record(), names(&"6".into()), text("six"))
                .is_none()
        );
        assert_eq!(Arc::strong_count(&shout), 2);
        assert_eq!(newest_arguments(&ring), "SIX");
        let ids: Vec<String> = ids(&ring);
        assert_eq!(ids, ["6", "5"]);
    }

    #[test]
    fn text_over_text_of_another_reader_lets_the_old_one_go() {
        let shout = Arc::new(crate::audit::readers::Shout);
        let other = Arc::new(crate::audit::readers::Shout);
        let mut ring = Ring::new(1);
        let text = |text: &str, reader| CallArguments::Text {
            text: text.to_owned(),
            reader,
        };
        assert!(
            ring.keep(record(), names(&"1".into()), text("one", &shout))
                .is_none()
        );
        let released = ring.keep(record(), names(&"2".into()), text("two", &other));
        assert!(released.is_some(), "no record reads with the first reader");
        drop(released);
        assert_eq!(Arc::strong_count(&shout), 1);
        assert_eq!(Arc::strong_count(&other), 2);
        assert_eq!(ring.readers().len(), 1);
        assert_eq!(newest_arguments(&ring), "TWO");
    }
}
