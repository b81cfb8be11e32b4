//! Provider-specific views of a tool's canonical input schema, and checkers that say
//! precisely why a schema cannot be used with a provider.
//!
//! Every transform leaves the canonical schema alone: calls are always validated against
//! it. Transforms only reshape what a provider is shown, and never make the shown schema
//! accept less than the canonical one does (constraints a provider cannot express move into
//! the description and are still enforced by the registry).

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod mcp;
pub(crate) mod openai;
pub(crate) mod refs;

pub(crate) use crate::schema::{allows_null, escape, for_each_subschema, for_each_subschema_mut};

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

/// Why a schema (or one part of it) cannot be shown to a provider as is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incompatibility {
    /// JSON pointer into the canonical schema, e.g. `/properties/tags/additionalProperties`.
    pub path: String,
    /// What the provider does not accept.
    pub reason: String,
}

impl Incompatibility {
    pub(crate) fn new(path: &str, reason: impl Into<String>) -> Self {
        Incompatibility {
            path: if path.is_empty() {
                "/".to_owned()
            } else {
                path.to_owned()
            },
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Incompatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.reason)
    }
}

/// Appends a note to a schema's description, e.g. for a constraint moved out of the schema.
pub(crate) fn append_description(schema: &mut Map<String, Value>, note: &str) {
    let text = match schema.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing} ({note})"),
        _ => format!("({note})"),
    };
    schema.insert("description".to_owned(), Value::String(text));
}

/// Moves the listed constraint keywords out of a schema into a note in its description
/// (wording from [`CONSTRAINT_WORDING`]).
pub(crate) fn move_to_description(schema: &mut Map<String, Value>, keywords: &[&str]) {
    let mut notes = Vec::new();
    for (keyword, wording) in CONSTRAINT_WORDING {
        if keywords.contains(keyword)
            && let Some(value) = schema.remove(*keyword)
        {
            notes.push(format!("{wording} {}", compact(&value)));
        }
    }
    if !notes.is_empty() {
        append_description(schema, &notes.join(", "));
    }
}

/// `oneOf` as `anyOf`: exclusivity is lost in the view, not accepted values (the registry
/// still checks the canonical `oneOf`).
pub(crate) fn one_of_as_any_of(schema: &mut Map<String, Value>) {
    if let Some(branches) = schema.remove("oneOf") {
        schema.insert("anyOf".to_owned(), branches);
    }
}

/// Removes a `format` the provider does not know (schemars' `uint8`, `double`, ...).
pub(crate) fn keep_known_format(schema: &mut Map<String, Value>, known: &[&str]) {
    if let Some(Value::String(format)) = schema.get("format")
        && !known.contains(&format.as_str())
    {
        schema.remove("format");
    }
}

/// Reports a `format` the provider does not know.
pub(crate) fn check_format(
    schema: &Map<String, Value>,
    path: &str,
    known: &[&str],
    problems: &mut Vec<Incompatibility>,
) {
    if let Some(Value::String(format)) = schema.get("format")
        && !known.contains(&format.as_str())
    {
        problems.push(Incompatibility::new(
            &format!("{path}/format"),
            format!("the format \"{format}\" is not supported by this provider"),
        ));
    }
}

/// Keywords with a meaning no provider view can express (conditionals, pattern-keyed
/// properties, tuple items, ...). Each provider adds its own to these.
pub(crate) const INEXPRESSIBLE: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "additionalItems",
];

/// A view built on the schema with every reference inlined: the transform, then
/// [`finish`] with the provider's checker.
pub(crate) fn inlined_view(
    canonical: &Value,
    transform: fn(&mut Value, &str, &mut Vec<Incompatibility>),
    check: fn(&Value) -> Vec<Incompatibility>,
) -> Result<Value, Vec<Incompatibility>> {
    let mut schema = refs::inline_all(canonical)?;
    let mut problems = Vec::new();
    transform(&mut schema, "", &mut problems);
    finish(schema, problems, check)
}

/// The result of a transform: its own findings if it had any (they say best what is wrong),
/// otherwise whatever the provider's checker still finds in the result.
pub(crate) fn finish(
    schema: Value,
    problems: Vec<Incompatibility>,
    check: fn(&Value) -> Vec<Incompatibility>,
) -> Result<Value, Vec<Incompatibility>> {
    let problems = if problems.is_empty() {
        check(&schema)
    } else {
        problems
    };
    if problems.is_empty() {
        Ok(schema)
    } else {
        Err(problems)
    }
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Constraints most providers cannot express, with how they read in a description.
pub(crate) const CONSTRAINT_WORDING: &[(&str, &str)] = &[
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("exclusiveMinimum", "greater than"),
    ("exclusiveMaximum", "less than"),
    ("multipleOf", "multiple of"),
    ("minLength", "at least this many characters:"),
    ("maxLength", "at most this many characters:"),
    ("pattern", "matching the pattern"),
    ("minItems", "at least this many items:"),
    ("maxItems", "at most this many items:"),
    ("uniqueItems", "unique items:"),
    ("default", "default"),
];
