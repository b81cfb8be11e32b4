//! An append-only JSON Lines audit file in which each record carries the hash of the one
//! before it, so an altered or removed record is detected by [`verify_log`](super::verify_log).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::chain::{GENESIS, Link, link};
use super::{AuditRecord, AuditSink};
use crate::util::digest::hex_digest;
use crate::util::sync::lock;

struct Chain {
    file: File,
    seq: u64,
    last_hash: String,
}

/// Appends one line per record: the record's fields plus `seq`, `prev_hash` and, last,
/// `hash`: the SHA-256 of the exact bytes of the line up to `,"hash"` closed by `}`, so any
/// change to a line's bytes (a space, an escape, a repeated key) breaks its hash. Each line
/// is written whole in one call, under a lock, so concurrent calls never interleave; a crash
/// can tear at most the last line, which reopening detects and cuts off.
///
/// One file has one writer: the sink holds an exclusive lock on it while open, so a second
/// sink on the same path (in this process or another) fails to open with a clear error
/// instead of forking the chain. To record the calls of several registries in one file,
/// open one sink and give each registry a clone of an `Arc` of it.
pub struct JsonlFileSink {
    path: PathBuf,
    chain: Mutex<Chain>,
}

impl JsonlFileSink {
    /// Opens (or creates) the file and continues its chain. A torn last line (from a crash
    /// mid-write) is cut off, with a warning.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)?;
        file.try_lock().map_err(|error| match error {
            std::fs::TryLockError::WouldBlock => io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!(
                    "the audit log {} is already open for writing (by this process or another); \
                     share one JsonlFileSink (in an Arc) between registries, or give each its own file",
                    path.display()
                ),
            ),
            std::fs::TryLockError::Error(error) => error,
        })?;
        let mut text = Vec::new();
        file.read_to_end(&mut text)?;
        let complete = match text.iter().rposition(|byte| *byte == b'\n') {
            Some(end) => end + 1,
            None => 0,
        };
        if complete < text.len() {
            tracing::warn!(path = %path.display(), bytes = text.len() - complete, "audit log ends in a torn line; cutting it off");
            file.set_len(complete as u64)?;
            file.seek(SeekFrom::End(0))?;
        }
        let (seq, last_hash) = match text[..complete]
            .split(|byte| *byte == b'\n')
            .rfind(|line| !line.is_empty())
        {
            Some(line) => {
                let last: Value = serde_json::from_slice(line).map_err(|error| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("the last audit line is not JSON: {error}"),
                    )
                })?;
                (
                    last["seq"].as_u64().unwrap_or(0) + 1,
                    last["hash"].as_str().unwrap_or(GENESIS).to_owned(),
                )
            }
            None => (0, GENESIS.to_owned()),
        };
        Ok(JsonlFileSink {
            path,
            chain: Mutex::new(Chain {
                file,
                seq,
                last_hash,
            }),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The hash of the newest record: keep it elsewhere to detect records cut off the end.
    pub fn last_hash(&self) -> String {
        lock(&self.chain).last_hash.clone()
    }

    fn append(&self, record: &AuditRecord) -> io::Result<()> {
        let mut chain = lock(&self.chain);
        let Link { body, hash } = link(record, chain.seq, &chain.last_hash);
        let mut text = body;
        text.pop(); // the closing `}`
        text.push_str(&format!(",\"hash\":\"{hash}\"}}\n"));
        chain.file.write_all(text.as_bytes())?;
        chain.seq += 1;
        chain.last_hash = hash;
        Ok(())
    }
}

impl AuditSink for JsonlFileSink {
    fn record(&self, record: &AuditRecord) {
        if let Err(error) = self.append(record) {
            tracing::error!(path = %self.path.display(), %error, "could not write an audit record");
        }
    }
}

/// Length of `,"hash":"<64 hex digits>"}`, the end of every line.
const HASH_SUFFIX: usize = 9 + 64 + 2;

/// The hash a line claims and the SHA-256 of its exact hashed bytes (the line up to
/// `,"hash"`, closed by `}`), or `None` for a line that does not end in a hash.
pub(crate) fn claimed_and_actual_hash(line: &[u8]) -> Option<(&str, String)> {
    let split = line.len().checked_sub(HASH_SUFFIX)?;
    let (body, suffix) = line.split_at(split);
    let claimed = suffix.strip_prefix(b",\"hash\":\"")?.strip_suffix(b"\"}")?;
    let claimed = std::str::from_utf8(claimed).ok()?;
    let mut hasher = Sha256::new();
    hasher.update(body);
    hasher.update(b"}");
    Some((claimed, hex_digest(&hasher.finalize())))
}
