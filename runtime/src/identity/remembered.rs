//! Tokens already checked, remembered with the caller they identified, so a client
//! presenting the same token again costs a hash and a lookup instead of a signature check or
//! an introspection. They are kept in this process's memory only (as the requests that
//! brought them were), never written anywhere, and only until they expire. A token is found
//! by a hash keyed with a random seed of this process and then compared whole: reaching the
//! comparison takes a token of the same 64-bit keyed hash as one remembered, which nobody
//! outside can aim for, so the comparison's time tells nothing.
//!
//! A remembered token is answered only while it would pass again: before its `exp` (an
//! introspected one also within the longest trust), and, for a JWT, while the keys that
//! checked it are still the issuer's current ones and not older than their maximum age.
//! When the keys are fetched anew, every token they checked is checked again.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::keys::KeySet;
use crate::caller::Caller;
use crate::util::sync::lock;

/// Shards of the memory, by the token's hash: requests of different tokens rarely wait for
/// one another.
const SHARDS: usize = 16;
/// Tokens remembered per shard at most; past it, the expired ones go, then all.
const PER_SHARD: usize = 256;
/// Longer tokens are checked every time rather than kept (the memory stays under 16 MiB).
const LONGEST_KEPT: usize = 4096;

/// The memory of checked tokens.
pub(crate) struct Remembered {
    hasher: foldhash::fast::RandomState,
    shards: [Mutex<Vec<Entry>>; SHARDS],
}

/// One checked token.
struct Entry {
    hash: u64,
    token: Box<str>,
    caller: Caller,
    until: Instant,
    /// The keys a JWT was checked with (none for an introspected token).
    keys: Option<Arc<KeySet>>,
}

impl Default for Remembered {
    fn default() -> Self {
        Remembered {
            hasher: foldhash::fast::RandomState::default(),
            shards: std::array::from_fn(|_| Mutex::new(Vec::new())),
        }
    }
}

impl Remembered {
    /// The caller of a token checked before, if it would pass again now; `current` says
    /// whether keys a JWT was checked with are still the ones to check with.
    pub(crate) fn caller(
        &self,
        token: &str,
        current: impl Fn(&Arc<KeySet>) -> bool,
    ) -> Option<Caller> {
        let hash = self.hasher.hash_one(token);
        let shard = lock(&self.shards[shard_of(hash)]);
        let entry = shard
            .iter()
            .find(|entry| entry.hash == hash && *entry.token == *token)?;
        let fresh = entry.until > Instant::now() && entry.keys.as_ref().is_none_or(current);
        fresh.then(|| entry.caller.clone())
    }

    /// Remembers the caller of a token until `until`.
    pub(crate) fn keep(
        &self,
        token: &str,
        caller: Caller,
        until: Instant,
        keys: Option<Arc<KeySet>>,
    ) {
        if token.len() > LONGEST_KEPT {
            return;
        }
        let hash = self.hasher.hash_one(token);
        let mut shard = lock(&self.shards[shard_of(hash)]);
        let now = Instant::now();
        shard.retain(|entry| entry.until > now && !(entry.hash == hash && *entry.token == *token));
        if shard.len() >= PER_SHARD {
            shard.clear();
        }
        shard.push(Entry {
            hash,
            token: token.into(),
            caller,
            until,
            keys,
        });
    }
}

fn shard_of(hash: u64) -> usize {
    (hash >> 60) as usize % SHARDS
}
