//! A tool's result on its way out: the JSON value every caller can read, or, for a caller
//! that only writes it out, the text that value would be written as.

mod text;

use serde_json::Value;

use crate::error::ToolError;

pub(crate) use text::value_text;

/// `value` with its objects' keys sorted, as serde_json's own build holds them. There it
/// does nothing; where a crate of the program turns on serde_json's `preserve_order`
/// (`cedar-policy` does), a value keeps keys in the order they came, and a result (a
/// `HashMap`'s, say) would be written in another order each time: results are sorted here,
/// so toolgate answers alike in every build.
#[inline(always)]
pub(crate) fn sorted(mut value: Value) -> Value {
    value.sort_all_objects();
    value
}

/// The form a tool's result is asked for in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultForm {
    /// A `serde_json::Value`.
    Value,
    /// JSON text where it is the value's text exactly, else a value.
    Text,
}

/// A tool's successful result, in the form it was made in.
#[derive(Debug, Clone, PartialEq)]
pub enum Produced {
    /// As a value.
    Value(Value),
    /// As the compact JSON text of its value (its keys sorted, each once), in UTF-8.
    Text(Vec<u8>),
}

impl Produced {
    /// The result as a value (text parsed back: it is the text of one).
    pub(crate) fn into_value(self) -> Value {
        match self {
            Produced::Value(value) => value,
            Produced::Text(text) => parsed(&text),
        }
    }
}

/// A successful result's value, however it is held (for those who watch calls end).
pub(crate) trait ResultValue {
    /// A copy of the value (text parsed back).
    fn value(&self) -> Value;
}

impl ResultValue for Value {
    fn value(&self) -> Value {
        self.clone()
    }
}

impl ResultValue for Produced {
    fn value(&self) -> Value {
        match self {
            Produced::Value(value) => value.clone(),
            Produced::Text(text) => parsed(text),
        }
    }
}

/// A value's text, read back (it was written by serde_json, so it reads). Apart and cold:
/// results that are values, most of them, only pass by it.
#[cold]
#[inline(never)]
fn parsed(text: &[u8]) -> Value {
    serde_json::from_slice(text).unwrap_or_else(|error| {
        let text = String::from_utf8_lossy(text);
        unreachable!("a value's own text reads back ({error}): {text}")
    })
}

/// A tool's result in either form, or its error.
pub(crate) type ProducedResult = Result<Produced, ToolError>;

/// `result` with its value as a value.
pub(crate) fn into_tool_result(result: ProducedResult) -> crate::ToolResult {
    result.map(Produced::into_value)
}
