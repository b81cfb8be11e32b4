//! The readers a part of the history holds for the text it keeps, one per tool, counted
//! under the part's lock.
//!
//! A kept text needs its tool to be read back (parsed, normalized, redacted). Holding the
//! tool's own counted reference in every record would count it up and down on every call,
//! from every core: one cache line passed between them. A part holds each reader once, and
//! its records name it by slot.

use std::sync::Arc;

use super::kept::{ReadBack, Reader};

/// The readers of one part, each in a slot its records name, with how many records use it.
#[derive(Default)]
pub(crate) struct Readers {
    slots: Vec<Option<Held>>,
    /// The slot of each held reader, by [`Reader::key`].
    by_key: foldhash::HashMap<usize, usize>,
    /// Slots let go, to be taken again.
    free: Vec<usize>,
    /// The slot held last: calls of one tool tend to come together, and find it without
    /// hashing.
    last: usize,
}

struct Held {
    key: usize,
    reader: Arc<dyn ReadBack>,
    records: usize,
}

impl Readers {
    /// One more record reads its text with `reader`: the slot it names.
    #[inline(always)]
    pub(crate) fn hold(&mut self, reader: &dyn Reader) -> usize {
        let key = reader.key();
        let slot = match self.slots.get(self.last) {
            Some(Some(held)) if held.key == key => self.last,
            _ => self.slot_of(key, reader),
        };
        if let Some(Some(held)) = self.slots.get_mut(slot) {
            held.records += 1;
        }
        self.last = slot;
        slot
    }

    fn slot_of(&mut self, key: usize, reader: &dyn Reader) -> usize {
        if let Some(&slot) = self.by_key.get(&key) {
            return slot;
        }
        let held = Some(Held {
            key,
            reader: reader.share(),
            records: 0,
        });
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = held;
                slot
            }
            None => {
                self.slots.push(held);
                self.slots.len() - 1
            }
        };
        self.by_key.insert(key, slot);
        slot
    }

    /// A record that read with `slot` is gone: the reader, when no record uses it any more
    /// (to be dropped after the lock: it may be the last reference to its tool).
    #[inline]
    pub(crate) fn release(&mut self, slot: usize) -> Option<Arc<dyn ReadBack>> {
        let held = self.slots.get_mut(slot)?.as_mut()?;
        held.records -= 1;
        if held.records > 0 {
            return None;
        }
        let held = self.slots[slot].take()?;
        self.by_key.remove(&held.key);
        self.free.push(slot);
        Some(held.reader)
    }

    /// The reader in `slot`, shared: text is read back with it after the part's lock is
    /// let go (parsing it there would keep the part's writers waiting).
    pub(crate) fn reader(&self, slot: usize) -> Option<Arc<dyn ReadBack>> {
        match self.slots.get(slot) {
            Some(Some(held)) => Some(Arc::clone(&held.reader)),
            _ => None,
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }
}

impl std::fmt::Debug for Readers {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_map()
            .entries(
                self.slots
                    .iter()
                    .flatten()
                    .map(|held| (held.key, held.records)),
            )
            .finish()
    }
}

/// Reads text back in capitals (for the history's tests).
#[cfg(test)]
pub(crate) struct Shout;

#[cfg(test)]
impl ReadBack for Shout {
    fn read_back(&self, text: &str) -> serde_json::Value {
        serde_json::Value::String(text.to_uppercase())
    }
}

#[cfg(test)]
impl ReadBack for Arc<Shout> {
    fn read_back(&self, text: &str) -> serde_json::Value {
        Shout.read_back(text)
    }
}

#[cfg(test)]
impl Reader for Arc<Shout> {
    fn key(&self) -> usize {
        Arc::as_ptr(self).addr()
    }

    fn share(&self) -> Arc<dyn ReadBack> {
        Arc::clone(self) as Arc<dyn ReadBack>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_take_slots_share_them_and_give_them_back() {
        let (a, b) = (Arc::new(Shout), Arc::new(Shout));
        let mut readers = Readers::default();
        let first_a = readers.hold(&a);
        let first_b = readers.hold(&b);
        assert_ne!(first_a, first_b);
        // Alternating tools find their own slots, with or without the last one's shortcut.
        assert_eq!(readers.hold(&a), first_a);
        assert_eq!(readers.hold(&a), first_a);
        assert_eq!(readers.hold(&b), first_b);
        assert_eq!([Arc::strong_count(&a), Arc::strong_count(&b)], [2, 2]);
        assert_eq!(readers.reader(first_b).unwrap().read_back("b"), "B");

        assert!(
            readers.release(first_b).is_none(),
            "one record of `b` is left"
        );
        assert!(readers.release(first_a).is_none());
        assert!(readers.release(first_a).is_none());
        let last_a = readers.release(first_a).expect("a's last record is gone");
        drop(last_a);
        assert_eq!(Arc::strong_count(&a), 1);
        assert_eq!(readers.len(), 1);

        // A new reader takes the slot let go; the shortcut does not mistake it for `a`.
        let c = Arc::new(Shout);
        assert_eq!(readers.hold(&c), first_a);
        assert_eq!(readers.hold(&b), first_b);
        assert_eq!(readers.hold(&c), first_a);
        assert_eq!(readers.len(), 2);
        assert_eq!(
            format!("{readers:?}").matches(": 2").count(),
            2,
            "{readers:?}"
        );
    }
}
