//! Ids for calls that came without one: unique, so that every call has a record of its own
//! (and a ticket or an event names one call), across restarts and instances sharing a store.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use smol_str::{SmolStr, SmolStrBuilder};

/// This process's part of every id: random, read once.
static PROCESS: LazyLock<String> = LazyLock::new(|| {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
    super::digest::hex_digest(&bytes)
});

static NEXT: AtomicU64 = AtomicU64::new(1);

/// `call-<process>-<n>`: a new id, not given before by this process, nor (but for a chance
/// of one in four billion per pair of processes) by another: 8 random hex digits per process,
/// then a count. Short enough to be kept inline, without an allocation.
pub(crate) fn new_call_id() -> SmolStr {
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut digits = itoa::Buffer::new();
    let mut id = SmolStrBuilder::new();
    id.push_str("call-");
    id.push_str(&PROCESS);
    id.push('-');
    id.push_str(digits.format(count));
    id.finish()
}

#[cfg(test)]
mod tests {
    use super::new_call_id;

    #[test]
    fn ids_are_unique_and_name_the_process() {
        let (first, second) = (new_call_id(), new_call_id());
        assert_ne!(first, second);
        let prefix = &first[..14];
        assert!(
            prefix.starts_with("call-") && prefix.ends_with('-'),
            "{first}"
        );
        assert!(
            prefix[5..13].chars().all(|c| c.is_ascii_hexdigit()),
            "{first}"
        );
        assert_eq!(prefix, &second[..14], "one process's prefix");
        assert!(!first.is_heap_allocated());
    }
}
