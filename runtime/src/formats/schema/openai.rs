//! OpenAI strict mode (`"strict": true`): every object closed with
//! `additionalProperties: false`, every property required (optional ones as a union with
//! null), a restricted set of keywords, and size limits.

use serde_json::{Map, Value, json};

use super::refs::expand_reference;
use super::{
    INEXPRESSIBLE, Incompatibility, allows_null, check_format, escape, finish, for_each_subschema,
    for_each_subschema_mut, keep_known_format, move_to_description, one_of_as_any_of,
};
use crate::schema::{is_object_schema, required_names};

/// Deepest nesting of objects strict mode accepts.
pub const MAX_DEPTH: usize = 10;
/// Most properties, over the whole schema.
pub const MAX_PROPERTIES: usize = 5000;
/// Most enum values, over the whole schema.
pub const MAX_ENUM_VALUES: usize = 1000;

/// String formats strict mode accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords strict mode accepts.
const ALLOWED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "description",
    "title",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
/// Keywords with a meaning strict mode cannot express (besides [`INEXPRESSIBLE`]).
const UNSUPPORTED: &[&str] = &["allOf", "minProperties", "maxProperties"];
/// Constraints strict mode rejects but a description can carry (still enforced by the registry).
const MOVED: &[&str] = &["minLength", "maxLength", "uniqueItems", "default"];

/// The strict-mode view of a canonical input schema, or every reason it cannot be strict.
///
/// ```
/// use serde_json::json;
///
/// let canonical = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer", "format": "uint8"}},
///     "required": ["city"]
/// });
/// let strict = toolgate::formats::openai::strict_schema(&canonical).unwrap();
/// assert_eq!(strict, json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"]}},
///     "required": ["city", "days"],
///     "additionalProperties": false
/// }));
/// ```
pub fn strict_schema(canonical: &Value) -> Result<Value, Vec<Incompatibility>> {
    let mut problems = Vec::new();
    let mut schema = canonical.clone();
    if canonical.get("type") != Some(&json!("object")) {
        problems.push(Incompatibility::new(
            "",
            "the root must be an object schema",
        ));
    }
    transform(canonical, &mut schema, "", 0, &mut problems);
    finish(schema, problems, check_strict)
}

fn transform(
    root: &Value,
    node: &mut Value,
    path: &str,
    depth: usize,
    problems: &mut Vec<Incompatibility>,
) {
    let Value::Object(map) = node else {
        // `true`/`false` schemas: checked below as "any value".
        return;
    };
    // `$ref` may not have siblings: inline the target under them.
    if map.contains_key("$ref") && map.len() > 1 {
        match expand_reference(root, map, path, &[], problems) {
            Some((_, merged)) => *map = merged,
            None => return,
        }
    }
    one_of_as_any_of(map);
    keep_known_format(map, FORMATS);
    move_to_description(map, MOVED);
    map.retain(|key, _| ALLOWED.contains(&key.as_str()) || unsupported(key));
    if is_object_schema(map) {
        close_object(map, path, problems);
    }
    let child_depth = if is_object_schema(map) {
        depth + 1
    } else {
        depth
    };
    for_each_subschema_mut(map, path, |child_path, child| {
        transform(root, child, child_path, child_depth, problems)
    });
}

fn unsupported(key: &str) -> bool {
    UNSUPPORTED.contains(&key) || INEXPRESSIBLE.contains(&key)
}

/// `additionalProperties: false`, every property required, optional ones nullable.
fn close_object(map: &mut Map<String, Value>, path: &str, problems: &mut Vec<Incompatibility>) {
    match map.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => {
            problems.push(Incompatibility::new(
                &format!("{path}/additionalProperties"),
                "an open map (`additionalProperties` other than `false`): strict mode needs every key declared; use a struct, or a list of key/value pairs",
            ));
            return;
        }
    }
    map.insert("additionalProperties".to_owned(), Value::Bool(false));
    let required: Vec<String> = required_names(map).into_iter().map(str::to_owned).collect();
    let properties = map.entry("properties").or_insert_with(|| json!({}));
    let Value::Object(properties) = properties else {
        return;
    };
    let mut all = Vec::new();
    for (name, property) in properties.iter_mut() {
        if !required.contains(name) {
            make_nullable(property);
        }
        all.push(Value::String(name.clone()));
    }
    map.insert("required".to_owned(), Value::Array(all));
}

/// Lets a schema also accept `null` (how strict mode says "optional").
pub(crate) fn make_nullable(schema: &mut Value) {
    if allows_null(schema) {
        return;
    }
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return;
    }
    let typed = match map.get("type").cloned() {
        Some(Value::String(kind)) => {
            map.insert("type".to_owned(), json!([kind, "null"]));
            true
        }
        Some(Value::Array(mut kinds)) => {
            kinds.push(json!("null"));
            map.insert("type".to_owned(), Value::Array(kinds));
            true
        }
        _ => false,
    };
    if typed {
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            values.push(Value::Null);
        }
        return;
    }
    // `$ref`, `const` or `enum` without a type: a union with null, keeping the description
    // on the outside where the model reads it.
    let mut inner = std::mem::take(map);
    let description = inner.remove("description");
    map.insert(
        "anyOf".to_owned(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    if let Some(description) = description {
        map.insert("description".to_owned(), description);
    }
}

/// Every way `schema` breaks strict mode's rules; empty when it can be sent with
/// `"strict": true`.
pub fn check_strict(schema: &Value) -> Vec<Incompatibility> {
    let mut problems = Vec::new();
    if schema.get("anyOf").is_some() {
        problems.push(Incompatibility::new("", "the root may not be `anyOf`"));
    }
    let mut totals = (0usize, 0usize);
    check_node(schema, "", 0, &mut totals, &mut problems);
    if totals.0 > MAX_PROPERTIES {
        problems.push(Incompatibility::new(
            "",
            format!(
                "{} properties in all; strict mode allows {MAX_PROPERTIES}",
                totals.0
            ),
        ));
    }
    if totals.1 > MAX_ENUM_VALUES {
        problems.push(Incompatibility::new(
            "",
            format!(
                "{} enum values in all; strict mode allows {MAX_ENUM_VALUES}",
                totals.1
            ),
        ));
    }
    problems
}

fn check_node(
    node: &Value,
    path: &str,
    depth: usize,
    totals: &mut (usize, usize),
    problems: &mut Vec<Incompatibility>,
) {
    let map = match node {
        Value::Object(map) if !map.is_empty() => map,
        _ => {
            problems.push(Incompatibility::new(
                path,
                "accepts any JSON value; strict mode needs a declared type (e.g. a struct instead of `serde_json::Value`)",
            ));
            return;
        }
    };
    for key in map.keys() {
        if unsupported(key) {
            problems.push(Incompatibility::new(
                &format!("{path}/{}", escape(key)),
                format!("`{key}` is not supported in strict mode"),
            ));
        } else if !ALLOWED.contains(&key.as_str()) {
            problems.push(Incompatibility::new(
                &format!("{path}/{}", escape(key)),
                format!("`{key}` is not permitted in strict mode"),
            ));
        }
    }
    if map.contains_key("$ref") && map.len() > 1 {
        problems.push(Incompatibility::new(
            path,
            "`$ref` may not have sibling keywords in strict mode",
        ));
    }
    check_format(map, path, FORMATS, problems);
    if let Some(Value::Array(values)) = map.get("enum") {
        totals.1 += values.len();
    }
    let mut depth = depth;
    if is_object_schema(map) {
        depth += 1;
        if depth > MAX_DEPTH {
            problems.push(Incompatibility::new(
                path,
                format!("objects nest {depth} levels deep here; strict mode allows {MAX_DEPTH}"),
            ));
        }
        check_closed(map, path, totals, problems);
    }
    for_each_subschema(map, path, |child_path, child| {
        check_node(child, child_path, depth, totals, problems)
    });
}

fn check_closed(
    map: &Map<String, Value>,
    path: &str,
    totals: &mut (usize, usize),
    problems: &mut Vec<Incompatibility>,
) {
    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
        problems.push(Incompatibility::new(
            &format!("{path}/additionalProperties"),
            "every object needs `additionalProperties: false` in strict mode",
        ));
    }
    let names: Vec<&String> = map
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    totals.0 += names.len();
    let required = required_names(map);
    for name in names {
        if !required.contains(&name.as_str()) {
            problems.push(Incompatibility::new(
                &format!("{path}/properties/{}", escape(name)),
                "every property must be required in strict mode (make an optional one a union with null)",
            ));
        }
    }
}
