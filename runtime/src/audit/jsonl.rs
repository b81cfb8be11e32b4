//! An append-only JSON Lines audit file in which each record carries the hash of the one
//! before it, so an altered or removed record is detected by [`verify_log`](super::verify_log).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{AuditRecord, AuditSink};
use crate::approval::hex_digest;

/// `prev_hash` of the first record.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

struct Chain {
    file: File,
    seq: u64,
    last_hash: String,
}

/// Appends one line per record: the record's fields plus `seq`, `prev_hash` and `hash`
/// (SHA-256 of the line without `hash`). Each line is written whole in one call, under a
/// lock, so concurrent calls never interleave; a crash can tear at most the last line,
/// which reopening detects and cuts off (earlier lines stay intact).
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
        self.chain
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_hash
            .clone()
    }

    fn append(&self, record: &AuditRecord) -> io::Result<()> {
        let mut chain = self.chain.lock().unwrap_or_else(PoisonError::into_inner);
        let mut line = json!(record);
        line["seq"] = json!(chain.seq);
        line["prev_hash"] = json!(chain.last_hash);
        let hash = line_hash(&line);
        line["hash"] = json!(hash);
        let mut text = line.to_string();
        text.push('\n');
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

/// SHA-256, hex, of a line's JSON without its `hash` field.
pub(crate) fn line_hash(line: &Value) -> String {
    let mut unhashed = line.clone();
    if let Value::Object(map) = &mut unhashed {
        map.remove("hash");
    }
    hex_digest(&Sha256::digest(unhashed.to_string().as_bytes()))
}
