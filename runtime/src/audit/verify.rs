//! Checking an audit file's hash chain.

use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::AuditRecord;
use super::chain::GENESIS;
use super::jsonl::claimed_and_actual_hash;

/// A verified audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedLog {
    /// Every record, in order.
    pub records: Vec<AuditRecord>,
    /// The hash of the last record (compare it with one kept elsewhere to detect records cut
    /// off the end).
    pub last_hash: String,
    /// Whether the file ends in a torn line (a crash mid-write); the records before it are
    /// intact and verified.
    pub torn_tail: bool,
    /// Each record's hash, in order (a hash noted earlier that is not among them means
    /// records were cut off the end since).
    pub hashes: Vec<String>,
}

/// Where an audit log stops being trustworthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogProblem {
    /// The file could not be read.
    Unreadable(String),
    /// A complete line that is not a record (1-based line number).
    NotARecord {
        /// The line.
        line: usize,
    },
    /// The record on this line was changed after it was written.
    Altered {
        /// The line.
        line: usize,
    },
    /// One or more records before this line were removed (or reordered).
    Removed {
        /// The line after the gap.
        line: usize,
    },
}

impl fmt::Display for LogProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogProblem::Unreadable(error) => write!(f, "the audit log could not be read: {error}"),
            LogProblem::NotARecord { line } => write!(f, "line {line} is not an audit record"),
            LogProblem::Altered { line } => write!(f, "the record on line {line} was altered"),
            LogProblem::Removed { line } => write!(
                f,
                "the chain breaks before line {line}: a record before it was removed, reordered or rewritten"
            ),
        }
    }
}

impl std::error::Error for LogProblem {}

/// Verifies every record's hash and the chain between them; names the first line that was
/// altered, or after which records were removed.
pub fn verify_log(path: impl AsRef<Path>) -> Result<VerifiedLog, LogProblem> {
    let bytes =
        std::fs::read(path.as_ref()).map_err(|error| LogProblem::Unreadable(error.to_string()))?;
    let complete = bytes
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(0, |end| end + 1);
    let mut records = Vec::new();
    let mut hashes = Vec::new();
    let mut previous = GENESIS.to_owned();
    for (index, line) in bytes[..complete].split(|byte| *byte == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let number = index + 1;
        let value: Value =
            serde_json::from_slice(line).map_err(|_| LogProblem::NotARecord { line: number })?;
        // The hash covers the exact bytes, not a re-serialization of what they parse to.
        let (hash, actual) =
            claimed_and_actual_hash(line).ok_or(LogProblem::NotARecord { line: number })?;
        if actual != hash {
            return Err(LogProblem::Altered { line: number });
        }
        let expected_seq = records.len() as u64;
        if value["prev_hash"].as_str() != Some(previous.as_str())
            || value["seq"].as_u64() != Some(expected_seq)
        {
            return Err(LogProblem::Removed { line: number });
        }
        let record: AuditRecord = serde_json::from_value(value.clone())
            .map_err(|_| LogProblem::NotARecord { line: number })?;
        previous = hash.to_owned();
        hashes.push(previous.clone());
        records.push(record);
    }
    Ok(VerifiedLog {
        records,
        last_hash: previous,
        torn_tail: complete < bytes.len(),
        hashes,
    })
}
