//! Arguments that passed the schema (or a proven tool's reader), as every step after the
//! arguments stage holds them: as a value, or as the text a proven tool read.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::Arc;

use serde_json::Value;

use crate::audit::{CallArguments, ReadBack, Reader, redact_in_place};
use crate::exact::ExactInput;
use crate::registry::snapshot::Entry;
use crate::stage::ShownArguments;

/// Arguments that may run.
pub(crate) enum Checked {
    /// Checked against the schema (and normalized).
    Value(Value),
    /// Text a proven tool has read straight into its parameters.
    Text(String),
}

/// Checked arguments, borrowed: what the policy and the call's events look at.
#[derive(Clone, Copy)]
pub(crate) enum Arguments<'a> {
    Value(&'a Value),
    Text(&'a str),
}

impl<'a> Arguments<'a> {
    /// The arguments as a JSON value (see [`Checked::value`]).
    pub(crate) fn value(self, entry: &Entry) -> Cow<'a, Value> {
        match self {
            Arguments::Value(value) => Cow::Borrowed(value),
            Arguments::Text(text) => Cow::Owned(entry.read_text(text)),
        }
    }
}

/// Checked arguments, read into a value only if someone asks (the policy): text a proven
/// tool read is parsed again then, a value is shown as it is.
pub(crate) struct WhenAsked<'a> {
    entry: &'a Entry,
    arguments: Arguments<'a>,
    read: OnceCell<Value>,
}

impl<'a> WhenAsked<'a> {
    pub(crate) fn new(entry: &'a Entry, arguments: Arguments<'a>) -> Self {
        WhenAsked {
            entry,
            arguments,
            read: OnceCell::new(),
        }
    }
}

impl ShownArguments for WhenAsked<'_> {
    /// In clear whatever is asked: only the policy reads them this way, and tools that take
    /// secrets are never read as text.
    fn shown(&self, _clear: bool) -> &Value {
        match self.arguments {
            Arguments::Value(value) => value,
            Arguments::Text(text) => self.read.get_or_init(|| self.entry.read_text(text)),
        }
    }
}

impl<'a> From<ExactInput<'a>> for Arguments<'a> {
    fn from(input: ExactInput<'a>) -> Self {
        match input {
            ExactInput::Text(text) => Arguments::Text(text),
            ExactInput::Value(value) => Arguments::Value(value),
        }
    }
}

impl Checked {
    /// The arguments, borrowed.
    pub(crate) fn view(&self) -> Arguments<'_> {
        match self {
            Checked::Value(value) => Arguments::Value(value),
            Checked::Text(text) => Arguments::Text(text),
        }
    }

    /// The arguments as a JSON value: borrowed, or read back from the text (for the rare
    /// step that needs one: an approval, an event, a record written before the run).
    pub(crate) fn value(&self, entry: &Entry) -> Cow<'_, Value> {
        self.view().value(entry)
    }

    /// The arguments as the call's record keeps them, secrets redacted; text with its
    /// entry, borrowed, to read it back.
    pub(crate) fn into_kept(self, entry: &Arc<Entry>) -> CallArguments<'_> {
        match self {
            Checked::Value(mut value) => {
                redact_in_place(&mut value, &entry.definition.secret_arguments);
                CallArguments::Value(value)
            }
            Checked::Text(text) => CallArguments::Text {
                text,
                reader: entry,
            },
        }
    }
}

impl Entry {
    /// Text that a proven tool read, as the checked path would have made it.
    fn read_text(&self, text: &str) -> Value {
        // It was read once already, so it parses.
        let mut value = serde_json::from_str(text).unwrap_or(Value::Null);
        self.normalize(&mut value);
        value
    }
}

impl ReadBack for Entry {
    fn read_back(&self, text: &str) -> Value {
        let mut value = self.read_text(text);
        redact_in_place(&mut value, &self.definition.secret_arguments);
        value
    }
}

impl ReadBack for Arc<Entry> {
    fn read_back(&self, text: &str) -> Value {
        Entry::read_back(self, text)
    }
}

impl Reader for Arc<Entry> {
    fn key(&self) -> usize {
        Arc::as_ptr(self).addr()
    }

    fn share(&self) -> Arc<dyn ReadBack> {
        Arc::clone(self) as Arc<dyn ReadBack>
    }
}
