//! A record as the registry hands it to its in-memory history: what the call already holds
//! is shared (the caller), what is fixed stays static (decision, outcome), and arguments read
//! straight from their text stay text. An [`AuditRecord`] is made only when one is read.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::AuditRecord;
use crate::caller::Caller;

/// Turns arguments kept as text back into the value a record shows (parsed, normalized as
/// the checked path would have, secrets redacted).
pub(crate) trait ReadBack: Send + Sync {
    fn read_back(&self, text: &str) -> Value;
}

/// A call's arguments as its record keeps them.
pub(crate) enum KeptArguments {
    /// As a JSON value (secrets already redacted).
    Value(Value),
    /// The text a proven tool read straight into its parameters, and how to read it back.
    Text {
        text: String,
        reader: Arc<dyn ReadBack>,
    },
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
    /// The arguments as a record shows them.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            KeptArguments::Value(value) => value.clone(),
            KeptArguments::Text { text, reader } => reader.read_back(text),
        }
    }

    fn into_value(self) -> Value {
        match self {
            KeptArguments::Value(value) => value,
            text => text.to_value(),
        }
    }
}

/// One call's record, as the memory history keeps it.
#[derive(Debug)]
pub(crate) struct KeptRecord {
    pub(crate) time_ms: u64,
    pub(crate) caller: Caller,
    pub(crate) tool: String,
    pub(crate) call_id: String,
    pub(crate) arguments: KeptArguments,
    pub(crate) decision: Cow<'static, str>,
    pub(crate) approver: Option<String>,
    pub(crate) outcome: Cow<'static, str>,
    pub(crate) duration_ms: f64,
}

impl KeptRecord {
    /// Takes `record`'s place, with `tool` and `call_id` copied into this record's own
    /// buffers; gives back what this record held that is not reused.
    pub(crate) fn overwrite(
        &mut self,
        record: KeptRecord,
        tool: &str,
        call_id: &str,
    ) -> (Caller, KeptArguments, Option<String>) {
        let KeptRecord {
            time_ms,
            caller,
            arguments,
            decision,
            approver,
            outcome,
            duration_ms,
            ..
        } = record;
        self.time_ms = time_ms;
        self.tool.clear();
        self.tool.push_str(tool);
        self.call_id.clear();
        self.call_id.push_str(call_id);
        self.decision = decision;
        self.outcome = outcome;
        self.duration_ms = duration_ms;
        let caller = std::mem::replace(&mut self.caller, caller);
        let arguments = std::mem::replace(&mut self.arguments, arguments);
        let approver = std::mem::replace(&mut self.approver, approver);
        (caller, arguments, approver)
    }

    /// The record, for reading.
    pub(crate) fn to_record(&self) -> AuditRecord {
        AuditRecord {
            time_ms: self.time_ms,
            caller: self.caller.id().to_owned(),
            role: self.caller.role().to_owned(),
            tool: self.tool.clone(),
            call_id: self.call_id.clone(),
            arguments: self.arguments.to_value(),
            decision: self.decision.clone().into_owned(),
            approver: self.approver.clone(),
            outcome: self.outcome.clone().into_owned(),
            duration_ms: self.duration_ms,
        }
    }

    /// The record, for sinks and stores that take records.
    pub(crate) fn into_record(self) -> AuditRecord {
        AuditRecord {
            time_ms: self.time_ms,
            caller: self.caller.id().to_owned(),
            role: self.caller.role().to_owned(),
            tool: self.tool,
            call_id: self.call_id,
            arguments: self.arguments.into_value(),
            decision: self.decision.into_owned(),
            approver: self.approver,
            outcome: self.outcome.into_owned(),
            duration_ms: self.duration_ms,
        }
    }
}

impl From<AuditRecord> for KeptRecord {
    fn from(record: AuditRecord) -> Self {
        KeptRecord {
            time_ms: record.time_ms,
            caller: Caller::new(record.caller, record.role),
            tool: record.tool,
            call_id: record.call_id,
            arguments: KeptArguments::Value(record.arguments),
            decision: Cow::Owned(record.decision),
            approver: record.approver,
            outcome: Cow::Owned(record.outcome),
            duration_ms: record.duration_ms,
        }
    }
}
