//! Schemas as MCP clients read them: JSON Schema 2020-12, whose format vocabulary does not
//! include the integer widths schemars writes (`int64`, `uint32`, ...). Clients that check
//! formats warn about those; the bounds that matter are in `minimum`/`maximum` already, and
//! a `format` is an annotation the registry's validation does not assert, so dropping one
//! changes nothing a call is checked against.

use serde_json::Value;

use super::{for_each_subschema_mut, keep_known_format};

/// The formats of JSON Schema 2020-12 (its format-annotation vocabulary).
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` with every non-standard `format` removed, at any depth.
pub(crate) fn standard_formats_only(schema: &Value) -> Value {
    let mut schema = schema.clone();
    strip(&mut schema);
    schema
}

fn strip(node: &mut Value) {
    let Value::Object(map) = node else {
        return;
    };
    keep_known_format(map, STANDARD_FORMATS);
    for_each_subschema_mut(map, "", |_, child| strip(child));
}
