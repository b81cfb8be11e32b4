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

    pub(crate) fn to_value(&self, readers: &Readers) -> Value {
        match self {
            KeptArguments::Value(value) => value.clone(),
            KeptArguments::Text { text, reader } => readers.read_back(*reader, text),
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Names<'a> {
    pub(crate) caller: &'a SmolStr,
    pub(crate) role: &'a SmolStr,
    pub(crate) tool: &'a SmolStr,
    pub(crate) call_id: &'a SmolStr,
}

/// One call's record, as the memory history keeps it.
#[derive(Debug)]
pub(crate) struct KeptRecord {
    /// Where it stands among all records: the monotonic clock's nanoseconds when the call
    /// ended (see [`crate::time::stamp`]).
    pub(crate) order: u64,
    pub(crate) time_ms: u64,
    pub(crate) caller: SmolStr,
    pub(crate) role: SmolStr,
    pub(crate) tool: SmolStr,
    pub(crate) call_id: SmolStr,
    pub(crate) arguments: KeptArguments,
    pub(crate) decision: Cow<'static, str>,
    pub(crate) approver: Option<String>,
    pub(crate) outcome: Cow<'static, str>,
    pub(crate) duration_ms: f64,
}

impl KeptRecord {
    /// Takes `record`'s place, with its names (see [`Names`]); gives back what this record
    /// held that is freed outside the history's lock.
    #[inline]
    pub(crate) fn overwrite(
        &mut self,
        record: KeptRecord,
        names: Names<'_>,
    ) -> (KeptArguments, Option<String>) {
        let KeptRecord {
            order,
            time_ms,
            arguments,
            decision,
            approver,
            outcome,
            duration_ms,
            ..
        } = record;
        self.order = order;
        self.time_ms = time_ms;
        self.caller.clone_from(names.caller);
        self.role.clone_from(names.role);
        self.tool.clone_from(names.tool);
        self.call_id.clone_from(names.call_id);
        self.decision = decision;
        self.outcome = outcome;
        self.duration_ms = duration_ms;
        let arguments = std::mem::replace(&mut self.arguments, arguments);
        let approver = std::mem::replace(&mut self.approver, approver);
        (arguments, approver)
    }

    /// `record` with the names copied in.
    pub(crate) fn named(record: KeptRecord, names: Names<'_>) -> KeptRecord {
        KeptRecord {
            caller: names.caller.clone(),
            role: names.role.clone(),
            tool: names.tool.clone(),
            call_id: names.call_id.clone(),
            ..record
        }
    }

    /// The record, for reading (its text read back by `readers`, those of its part).
    pub(crate) fn to_record(&self, readers: &Readers) -> AuditRecord {
        AuditRecord {
            time_ms: self.time_ms,
            caller: self.caller.to_string(),
            role: self.role.to_string(),
            tool: self.tool.to_string(),
            call_id: self.call_id.to_string(),
            arguments: self.arguments.to_value(readers),
            decision: self.decision.clone().into_owned(),
            approver: self.approver.clone(),
            outcome: self.outcome.clone().into_owned(),
            duration_ms: self.duration_ms,
        }
    }

    /// The record with `arguments`, for sinks and stores that take records.
    pub(crate) fn into_record(self, arguments: Value) -> AuditRecord {
        AuditRecord {
            time_ms: self.time_ms,
            caller: self.caller.into(),
            role: self.role.into(),
            tool: self.tool.into(),
            call_id: self.call_id.into(),
            arguments,
            decision: self.decision.into_owned(),
            approver: self.approver,
            outcome: self.outcome.into_owned(),
            duration_ms: self.duration_ms,
        }
    }
}

/// A record handed over whole (by [`AuditStore::append`](super::AuditStore::append)) stands
/// where it is handed over.
impl From<AuditRecord> for KeptRecord {
    fn from(record: AuditRecord) -> Self {
        KeptRecord {
            order: crate::time::stamp(std::time::Instant::now()).order,
            time_ms: record.time_ms,
            caller: record.caller.into(),
            role: record.role.into(),
            tool: record.tool.into(),
            call_id: record.call_id.into(),
            arguments: KeptArguments::Value(record.arguments),
            decision: Cow::Owned(record.decision),
            approver: record.approver,
            outcome: Cow::Owned(record.outcome),
            duration_ms: record.duration_ms,
        }
    }
}
