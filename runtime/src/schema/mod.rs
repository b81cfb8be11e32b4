//! The JSON Schema toolkit the call path and the provider views share: walking every
//! subschema, following local `$ref`s, telling object schemas and their required names,
//! and whether a schema admits `null`. Provider-specific transforms live in
//! `formats::schema`; this module knows no provider.

pub(crate) mod nulls;

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Keywords whose value is a list of subschemas.
const LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAPS: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

/// Where a direct subschema sits: a keyword, and a member name or index under it.
enum Slot {
    Single(String),
    Listed(String, usize),
    Named(String, String),
}

/// The slots of every direct subschema of `schema`.
fn slots(schema: &Map<String, Value>) -> Vec<Slot> {
    let mut slots = Vec::new();
    for (key, value) in schema {
        if SINGLE.contains(&key.as_str()) && value.is_object() {
            slots.push(Slot::Single(key.clone()));
        } else if LISTS.contains(&key.as_str())
            && let Value::Array(items) = value
        {
            slots.extend((0..items.len()).map(|index| Slot::Listed(key.clone(), index)));
        } else if MAPS.contains(&key.as_str())
            && let Value::Object(members) = value
        {
            slots.extend(
                members
                    .keys()
                    .map(|name| Slot::Named(key.clone(), name.clone())),
            );
        }
    }
    slots
}

impl Slot {
    fn pointer(&self, path: &str) -> String {
        match self {
            Slot::Single(key) => format!("{path}/{}", escape(key)),
            Slot::Listed(key, index) => format!("{path}/{}/{index}", escape(key)),
            Slot::Named(key, name) => format!("{path}/{}/{}", escape(key), escape(name)),
        }
    }

    fn get<'a>(&self, schema: &'a Map<String, Value>) -> Option<&'a Value> {
        match self {
            Slot::Single(key) => schema.get(key),
            Slot::Listed(key, index) => schema.get(key)?.get(index),
            Slot::Named(key, name) => schema.get(key)?.get(name),
        }
    }

    fn get_mut<'a>(&self, schema: &'a mut Map<String, Value>) -> Option<&'a mut Value> {
        match self {
            Slot::Single(key) => schema.get_mut(key),
            Slot::Listed(key, index) => schema.get_mut(key)?.get_mut(index),
            Slot::Named(key, name) => schema.get_mut(key)?.get_mut(name),
        }
    }
}

/// Calls `visit` with the pointer and value of every direct subschema of `schema`.
pub(crate) fn for_each_subschema(
    schema: &Map<String, Value>,
    path: &str,
    mut visit: impl FnMut(&str, &Value),
) {
    for slot in slots(schema) {
        if let Some(child) = slot.get(schema) {
            visit(&slot.pointer(path), child);
        }
    }
}

/// Like [`for_each_subschema`], with each subschema mutable.
pub(crate) fn for_each_subschema_mut(
    schema: &mut Map<String, Value>,
    path: &str,
    mut visit: impl FnMut(&str, &mut Value),
) {
    for slot in slots(schema) {
        let pointer = slot.pointer(path);
        if let Some(child) = slot.get_mut(schema) {
            visit(&pointer, child);
        }
    }
}

/// JSON-pointer escaping of one segment.
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Whether a schema admits `null`.
pub(crate) fn allows_null(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if map.is_empty() {
        return true;
    }
    let by_type = match map.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "null"),
        _ => false,
    };
    let by_enum = map
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|values| values.contains(&Value::Null));
    let by_branch = ["anyOf", "oneOf"].iter().any(|key| {
        map.get(*key)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(allows_null))
    });
    by_type || by_enum || by_branch || map.get("const") == Some(&Value::Null)
}

/// The definition a local reference (`#/$defs/Name`, `#/definitions/Name`) points at.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// Whether a schema describes an object (says so, or lists properties).
pub(crate) fn is_object_schema(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties")
}

/// The names a schema's `required` lists.
pub(crate) fn required_names(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
