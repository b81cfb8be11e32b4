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
    /// The file's length after the last line this sink knows of: another length means
    /// another writer appended since.
    end: u64,
    seq: u64,
    last_hash: String,
}

/// Appends one line per record: the record's fields plus `seq`, `prev_hash` and, last,
/// `hash`: the SHA-256 of the exact bytes of the line up to `,"hash"` closed by `}`, so any
/// change to a line's bytes (a space, an escape, a repeated key) breaks its hash. Each line
/// is written whole in one call, so concurrent calls never interleave; a crash can tear at
/// most the last line, which the next writer detects and cuts off.
///
/// Several sinks may append to one file, in this process or in others (`toolgate serve` and
/// `toolgate approvals` at once, say): each append takes the file's lock and continues the
/// chain from the file's last line, so they write one chain.
pub struct JsonlFileSink {
    path: PathBuf,
    chain: Mutex<Chain>,
}

impl JsonlFileSink {
    /// Opens (or creates) the file and continues its chain. A torn last line (from a crash
    /// mid-write) is cut off, with a warning.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)?;
        let mut chain = Chain {
            file,
            end: u64::MAX,
            seq: 0,
            last_hash: GENESIS.to_owned(),
        };
        chain.file.lock()?;
        let caught_up = chain.catch_up(&path);
        chain.file.unlock()?;
        caught_up?;
        Ok(JsonlFileSink {
            path,
            chain: Mutex::new(chain),
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
        chain.file.lock()?;
        let written = chain.append_locked(&self.path, record);
        chain.file.unlock()?;
        written
    }
}

impl Chain {
    /// Under the file's lock: continues from the file's last line and appends `record`.
    fn append_locked(&mut self, path: &Path, record: &AuditRecord) -> io::Result<()> {
        if self.file.metadata()?.len() != self.end {
            self.catch_up(path)?;
        }
        let Link { body, hash } = link(record, self.seq, &self.last_hash);
        let mut text = body;
        text.pop(); // the closing `}`
        text.push_str(&format!(",\"hash\":\"{hash}\"}}\n"));
        self.file.write_all(text.as_bytes())?;
        self.end += text.len() as u64;
        self.seq += 1;
        self.last_hash = hash;
        Ok(())
    }

    /// Under the file's lock: cuts a torn last line and reads where the chain ends.
    fn catch_up(&mut self, path: &Path) -> io::Result<()> {
        let length = self.file.metadata()?.len();
        let (complete, last) = last_line(&mut self.file, length)?;
        if complete < length {
            tracing::warn!(path = %path.display(), bytes = length - complete, "audit log ends in a torn line; cutting it off");
            self.file.set_len(complete)?;
        }
        (self.seq, self.last_hash) = match last {
            Some(line) => {
                let last: Value = serde_json::from_slice(&line).map_err(|error| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "the last audit line of {} is not JSON: {error}",
                            path.display()
                        ),
                    )
                })?;
                (
                    last["seq"].as_u64().unwrap_or(0) + 1,
                    last["hash"].as_str().unwrap_or(GENESIS).to_owned(),
                )
            }
            None => (0, GENESIS.to_owned()),
        };
        self.end = complete;
        Ok(())
    }
}

/// Where the file's complete lines end, and the last of them (read backwards from the end,
/// a block at a time: the file may be long).
fn last_line(file: &mut File, length: u64) -> io::Result<(u64, Option<Vec<u8>>)> {
    const BLOCK: u64 = 16 * 1024;
    let mut tail: Vec<u8> = Vec::new();
    let mut start = length;
    loop {
        let from = start.saturating_sub(BLOCK);
        let mut block = vec![0; (start - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut block)?;
        block.extend_from_slice(&tail);
        tail = block;
        start = from;
        let newlines: Vec<usize> = tail
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i)
            .collect();
        let Some(&last_newline) = newlines.last() else {
            if start == 0 {
                return Ok((0, None));
            }
            continue;
        };
        let complete = start + last_newline as u64 + 1;
        match newlines.len() {
            1 if start > 0 => continue,
            1 => return Ok((complete, Some(tail[..last_newline].to_vec()))),
            _ => {
                let before = newlines[newlines.len() - 2];
                return Ok((complete, Some(tail[before + 1..last_newline].to_vec())));
            }
        }
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
