//! The hash chain shared by every chained audit store (the JSON Lines file and the database
//! tables): how one record is linked to the one before it, and how a chain is checked.

use std::fmt;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use serde_json::Value;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::AuditRecord;
use crate::util::digest::hex_digest;

/// `prev_hash` of the first record.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One record linked into a chain: `body` is the record's JSON with `seq` and `prev_hash`
/// (the exact text that is hashed), `hash` the SHA-256 of it.
pub(crate) struct Link {
    pub(crate) body: String,
    pub(crate) hash: String,
}

/// Links `record` after the record whose hash is `prev_hash`, as number `seq`.
pub(crate) fn link(record: &AuditRecord, seq: u64, prev_hash: &str) -> Link {
    let mut body = json!(record);
    body["seq"] = json!(seq);
    body["prev_hash"] = json!(prev_hash);
    // Sorted as serde_json's own build writes it, whichever build writes the chain.
    let body = crate::output::sorted(body).to_string();
    let hash = hex_digest(&Sha256::digest(body.as_bytes()));
    Link { body, hash }
}

/// A record's linked body with the two values that link it left out, for a database to
/// fill in where the chain's head is (PostgreSQL links a group of records in one statement):
/// the body is `first`, the previous hash, `middle`, the number, `last`.
#[cfg(feature = "postgres")]
pub(crate) struct Unlinked {
    pub(crate) first: String,
    pub(crate) middle: String,
    pub(crate) last: String,
}

/// `record`'s body as [`link`] writes it, split where the previous hash and the number go.
#[cfg(feature = "postgres")]
pub(crate) fn unlinked(record: &AuditRecord) -> Unlinked {
    let Link { body, .. } = link(record, 0, "");
    // Both keys are the record's own, after every nested object (its arguments): keys are
    // sorted, and a string holds no bare quote, so the last of each is the record's.
    let hash_at = body
        .rfind(r#""prev_hash":""#)
        .map(|at| at + r#""prev_hash":""#.len());
    let seq_at = body.rfind(r#""seq":0"#).map(|at| at + r#""seq":"#.len());
    let (Some(hash_at), Some(seq_at)) = (hash_at, seq_at) else {
        unreachable!("a linked body names its previous hash and number");
    };
    Unlinked {
        first: body[..hash_at].to_owned(),
        middle: body[hash_at..seq_at].to_owned(),
        last: body[seq_at + 1..].to_owned(),
    }
}

/// A chain that checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedChain {
    /// How many records it holds.
    pub records: u64,
    /// The hash of the newest record (`None` for a store that does not chain its records):
    /// keep it elsewhere to detect records cut off the end later.
    pub last_hash: Option<String>,
}

/// Where a stored chain stops being trustworthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainBreak {
    /// The record with this number was changed after it was written.
    Altered {
        /// The record's number (0 for the first).
        seq: u64,
    },
    /// Records before this one were removed or reordered.
    Removed {
        /// The number of the record after the gap.
        seq: u64,
    },
    /// Records at the end were removed: the chain's head names a later record.
    CutOff {
        /// How many records the head says there are.
        expected: u64,
        /// How many there are.
        found: u64,
    },
}

impl fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainBreak::Altered { seq } => write!(f, "audit record {seq} was altered"),
            ChainBreak::Removed { seq } => write!(
                f,
                "the audit chain breaks before record {seq}: a record before it was removed or reordered"
            ),
            ChainBreak::CutOff { expected, found } => write!(
                f,
                "the audit chain's head names {expected} records, but only {found} are there: records were cut off the end"
            ),
        }
    }
}

impl std::error::Error for ChainBreak {}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// Checks stored links in order of their numbers: each body hashes to its hash, carries its
/// own number and the hash of the one before, and the records come without gaps.
#[derive(Debug)]
pub(crate) struct ChainChecker {
    expected_seq: u64,
    previous: String,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl Default for ChainChecker {
    fn default() -> Self {
        ChainChecker {
            expected_seq: 0,
            previous: GENESIS.to_owned(),
        }
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl ChainChecker {
    /// Checks the next stored link (`seq` and `caller` as stored beside it, for lookups: they
    /// must say what the hashed body says).
    pub(crate) fn next(
        &mut self,
        seq: u64,
        body: &str,
        hash: &str,
        caller: &str,
    ) -> Result<(), ChainBreak> {
        if hex_digest(&Sha256::digest(body.as_bytes())) != hash {
            return Err(ChainBreak::Altered { seq });
        }
        let value: Value = serde_json::from_str(body).map_err(|_| ChainBreak::Altered { seq })?;
        if value["caller"].as_str() != Some(caller) {
            return Err(ChainBreak::Altered { seq });
        }
        let linked = value["prev_hash"].as_str() == Some(self.previous.as_str())
            && value["seq"].as_u64() == Some(self.expected_seq)
            && seq == self.expected_seq;
        if !linked {
            return Err(ChainBreak::Removed { seq });
        }
        self.expected_seq += 1;
        self.previous = hash.to_owned();
        Ok(())
    }

    /// The chain so far, checked against the head the store keeps (its count and last hash).
    pub(crate) fn finish(self, head: Option<(u64, &str)>) -> Result<VerifiedChain, ChainBreak> {
        if let Some((count, last_hash)) = head
            && (count != self.expected_seq || last_hash != self.previous)
        {
            return Err(ChainBreak::CutOff {
                expected: count,
                found: self.expected_seq,
            });
        }
        Ok(VerifiedChain {
            records: self.expected_seq,
            last_hash: Some(self.previous),
        })
    }
}

#[cfg(all(test, feature = "postgres"))]
mod tests {
    #[test]
    fn an_unlinked_body_filled_in_is_the_linked_one() {
        let mut record = crate::audit::test_record("ann", "c1");
        // Nested keys named like the linking ones do not confuse the split.
        record.arguments = serde_json::json!({"prev_hash": "", "seq": 0, "x": {"seq": 0}});
        for (seq, prev) in [(0, super::GENESIS), (41, "ab12"), (1_000_000_007, "ff")] {
            let parts = super::unlinked(&record);
            let filled = format!("{}{prev}{}{seq}{}", parts.first, parts.middle, parts.last);
            assert_eq!(filled, super::link(&record, seq, prev).body);
        }
    }
}
