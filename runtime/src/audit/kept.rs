//! A record as the registry hands it to its in-memory history: names are the call's own
//! (short ones kept inline, longer ones shared with the call, never copied), what is fixed
//! stays static (decision, outcome), and arguments read straight from their text stay text. An [`AuditRecord`] is made only when one is read.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use smol_str::SmolStr;

use super::AuditRecord;
use super::readers::Readers;

/// Turns arguments kept as text back into the value a record shows (parsed, normalized as
/// the checked path would have, secrets redacted).
pub(crate) trait ReadBack: Send + Sync {
    fn read_back(&self, text: &str) -> Value;
}

/// A reader of kept text as a call holds it: its tool's entry, borrowed. The history
/// shares it (counts a reference) only for the first of its records that needs it.
pub(crate) trait Reader: ReadBack {
    /// Names the reader while it is held: its address.
    fn key(&self) -> usize;
    /// The reader, to be held by the history.
    fn share(&self) -> Arc<dyn ReadBack>;
}

/// A call's arguments on their way to its record.
pub(crate) enum CallArguments<'r> {
    /// As a JSON value (secrets already redacted).
    Value(Value),
    /// The text a proven tool read straight into its parameters, and how to read it back.
    Text {
        text: String,
        reader: &'r dyn Reader,
    },
}

impl Default for CallArguments<'_> {
    fn default() -> Self {
        CallArguments::Value(Value::Null)
    }
}

impl CallArguments<'_> {
    pub(crate) fn to_value(&self) -> Value {
        match self {
            CallArguments::Value(value) => value.clone(),
            CallArguments::Text { text, reader } => reader.read_back(text),
        }
    }

    pub(crate) fn into_value(self) -> Value {
        match self {
            CallArguments::Value(value) => value,
            text => text.to_value(),
        }
    }
}

/// A call's arguments as the history keeps them: a value, or text and the slot of its
/// reader in the record's part ([`Readers`]).
pub(crate) enum KeptArguments {
    Value(Value),
    Text { text: String, reader: usize },
}

impl Default for KeptArguments {
    fn default() -> Self {
        KeptArguments::Value(Value::Null)
    }
}

impl fmt::Debug for KeptArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeptArguments::Value(value) => value.fmt(f),
            KeptArguments::Text { text, .. } => f.debug_tuple("Text").field(text).finish(),
        }
    }
}

impl KeptArguments {
    /// Kept: text holds its reader in `readers`.
    #[inline]
    pub(crate) fn kept(arguments: CallArguments<'_>, readers: &mut Readers) -> Self {
        match arguments {
            CallArguments::Value(value) => KeptArguments::Value(value),
            CallArguments::Text { text, reader } => KeptArguments::Text {
                reader: readers.hold(reader),
                text,
            },
        }
    }

    /// Takes in `arguments` in place of these: text over text is written into the same
    /// place, not rewrapped (a rewrapped value is written in pieces and read back whole, a
    /// stall on every call). The new text's reader is held before the old one is let go,
    /// so a reader both use stays held; the old one is given back if no record uses it.
    #[inline]
    pub(crate) fn overwrite(
        &mut self,
        arguments: CallArguments<'_>,
        readers: &mut Readers,
    ) -> Option<Arc<dyn ReadBack>> {
        let old_reader = match self {
            KeptArguments::Text { reader, .. } => Some(*reader),
            KeptArguments::Value(_) => None,
        };
        match (&mut *self, arguments) {
            (
                KeptArguments::Text { text, reader },
                CallArguments::Text {
                    text: new_text,
                    reader: new_reader,
                },
            ) => {
                *reader = readers.hold(new_reader);
                *text = new_text;
            }
            (this, arguments) => *this = KeptArguments::kept(arguments, readers),
        }
        old_reader.and_then(|slot| readers.release(slot))
    }

    /// A copy of these arguments, with the reader its text is read back with.
    fn copied(&self, readers: &Readers) -> CopiedArguments {
        match self {
            KeptArguments::Value(value) => CopiedArguments::Value(value.clone()),
            KeptArguments::Text { text, reader } => {
                CopiedArguments::Text(text.clone(), readers.reader(*reader))
            }
        }
    }
}

/// Arguments copied out of the history, not yet read back.
enum CopiedArguments {
    Value(Value),
    Text(String, Option<Arc<dyn ReadBack>>),
}

impl CopiedArguments {
    fn into_value(self) -> Value {
        match self {
            CopiedArguments::Value(value) => value,
            CopiedArguments::Text(text, Some(reader)) => reader.read_back(&text),
            // Not reached: every kept text holds its reader. Nothing is shown rather than
            // text that was not redacted.
            CopiedArguments::Text(_, None) => {
                debug_assert!(false, "a kept text without its reader");
                Value::Null
            }
        }
    }
}

/// A record copied out of the history under its part's lock: made an [`AuditRecord`]
/// ([`CopiedRecord::into_record`]) after the lock is let go, where its text is read back.
pub(crate) struct CopiedRecord {
    record: AuditRecord,
    arguments: CopiedArguments,
}

impl CopiedRecord {
    /// The record, its arguments read back.
    pub(crate) fn into_record(self) -> AuditRecord {
        AuditRecord {
            arguments: self.arguments.into_value(),
            ..self.record
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Names<'a> {
    pub(crate) caller: &'a SmolStr,
    pub(crate) role: &'a SmolStr,
    pub(crate) tool: &'a SmolStr,
    pub(crate) call_id: &'a SmolStr,
    /// The issuer of the caller's token, if a token identified it.
    pub(crate) issuer: Option<&'a SmolStr>,
}

/// What a call's record says besides its names and arguments: small, so that it is handed
/// to the history without a copy of a whole record.
#[derive(Debug)]
pub(crate) struct Facts {
    /// Where it stands among all records: the monotonic clock's nanoseconds when the call
    /// ended (see [`crate::util::time::stamp`]).
    pub(crate) order: u64,
    pub(crate) time_ms: u64,
    pub(crate) decision: Cow<'static, str>,
    pub(crate) approver: Option<String>,
    pub(crate) outcome: Cow<'static, str>,
    pub(crate) duration_ms: f64,
}

impl Facts {
    /// The record of these facts, for sinks and stores that take records.
    pub(crate) fn into_record(self, names: Names<'_>, arguments: Value) -> AuditRecord {
        AuditRecord {
            time_ms: self.time_ms,
            caller: names.caller.to_string(),
            issuer: names.issuer.map(SmolStr::to_string),
            role: names.role.to_string(),
            tool: names.tool.to_string(),
            call_id: names.call_id.to_string(),
            arguments,
            decision: self.decision.into_owned(),
            approver: self.approver,
            outcome: self.outcome.into_owned(),
            duration_ms: self.duration_ms,
        }
    }
}

/// One call's record, as the memory history keeps it.
#[derive(Debug)]
pub(crate) struct KeptRecord {
    pub(crate) facts: Facts,
    pub(crate) caller: SmolStr,
    pub(crate) role: SmolStr,
    pub(crate) tool: SmolStr,
    pub(crate) call_id: SmolStr,
    pub(crate) issuer: Option<SmolStr>,
    pub(crate) arguments: KeptArguments,
}

impl KeptRecord {
    /// A record of `facts`, `names` and `arguments`.
    pub(crate) fn new(facts: Facts, names: Names<'_>, arguments: KeptArguments) -> Self {
        KeptRecord {
            facts,
            caller: names.caller.clone(),
            role: names.role.clone(),
            tool: names.tool.clone(),
            call_id: names.call_id.clone(),
            issuer: names.issuer.cloned(),
            arguments,
        }
    }

    /// Takes the place of the record of `facts`, `names` and `arguments`, written over this
    /// one where it lies (what this record held alone is freed here). Gives back the
    /// reader its text used when no record uses it any more: it may be the last reference
    /// to its tool, and is dropped after the lock.
    #[inline]
    pub(crate) fn overwrite(
        &mut self,
        facts: Facts,
        names: Names<'_>,
        arguments: CallArguments<'_>,
        readers: &mut Readers,
    ) -> Option<Arc<dyn ReadBack>> {
        let Facts {
            order,
            time_ms,
            decision,
            approver,
            outcome,
            duration_ms,
        } = facts;
        let kept = &mut self.facts;
        kept.order = order;
        kept.time_ms = time_ms;
        kept.decision = decision;
        kept.outcome = outcome;
        kept.duration_ms = duration_ms;
        kept.approver = approver;
        // Most callers have no issuer: nothing to write then.
        if self.issuer.as_ref() != names.issuer {
            self.issuer = names.issuer.cloned();
        }
        self.caller.clone_from(names.caller);
        self.role.clone_from(names.role);
        self.tool.clone_from(names.tool);
        self.call_id.clone_from(names.call_id);
        self.arguments.overwrite(arguments, readers)
    }

    /// A copy of the record, for reading (its text to be read back by the reader it has
    /// in `readers`, those of its part).
    pub(crate) fn copied(&self, readers: &Readers) -> CopiedRecord {
        let facts = &self.facts;
        let record = AuditRecord {
            time_ms: facts.time_ms,
            caller: self.caller.to_string(),
            issuer: self.issuer.as_ref().map(SmolStr::to_string),
            role: self.role.to_string(),
            tool: self.tool.to_string(),
            call_id: self.call_id.to_string(),
            arguments: Value::Null,
            decision: facts.decision.clone().into_owned(),
            approver: facts.approver.clone(),
            outcome: facts.outcome.clone().into_owned(),
            duration_ms: facts.duration_ms,
        };
        CopiedRecord {
            record,
            arguments: self.arguments.copied(readers),
        }
    }
}

/// A record handed over whole (by [`AuditStore::append`](super::AuditStore::append)): its
/// facts (it stands where it is handed over), and its names and arguments apart.
pub(crate) struct Whole {
    pub(crate) facts: Facts,
    pub(crate) names: [SmolStr; 4],
    pub(crate) issuer: Option<SmolStr>,
    pub(crate) arguments: Value,
}

impl From<AuditRecord> for Whole {
    fn from(record: AuditRecord) -> Self {
        Whole {
            facts: Facts {
                order: crate::util::time::stamp(crate::util::time::now()).order,
                time_ms: record.time_ms,
                decision: Cow::Owned(record.decision),
                approver: record.approver,
                outcome: Cow::Owned(record.outcome),
                duration_ms: record.duration_ms,
            },
            issuer: record.issuer.map(SmolStr::from),
            names: [record.caller, record.role, record.tool, record.call_id].map(SmolStr::from),
            arguments: record.arguments,
        }
    }
}
