//! Anthropic strict tool use (`"strict": true`): closed objects, no recursion, and no
//! numeric, string-length, pattern or array-size constraints (those move into descriptions).

use serde_json::Value;

use super::{
    INEXPRESSIBLE, Incompatibility, check_format, escape, for_each_subschema,
    for_each_subschema_mut, inlined_view, keep_known_format, move_to_description, one_of_as_any_of,
};
use crate::schema::is_object_schema;

/// String formats strict tool use accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords with a meaning strict tool use cannot express (besides [`INEXPRESSIBLE`]).
const UNSUPPORTED: &[&str] = &["minProperties", "maxProperties"];
/// Constraints strict tool use rejects, carried in the description instead.
const MOVED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "maxItems",
    "uniqueItems",
];

/// The strict-tool-use view of a canonical input schema, or every reason it cannot be strict.
pub fn strict_schema(canonical: &Value) -> Result<Value, Vec<Incompatibility>> {
    inlined_view(canonical, transform, check_strict)
}

fn transform(node: &mut Value, path: &str, problems: &mut Vec<Incompatibility>) {
    let Value::Object(map) = node else { return };
    one_of_as_any_of(map);
    keep_known_format(map, FORMATS);
    // Only 0 or 1 is accepted as `minItems`.
    if map
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 1)
    {
        move_to_description(map, &["minItems"]);
    }
    move_to_description(map, MOVED);
    if is_object_schema(map) {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {
                map.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            Some(_) => problems.push(Incompatibility::new(
                &format!("{path}/additionalProperties"),
                "an open map (`additionalProperties` other than `false`): strict tool use needs every key declared",
            )),
        }
    }
    for_each_subschema_mut(map, path, |child_path, child| {
        transform(child, child_path, problems)
    });
}

/// Every way `schema` breaks strict tool use's rules; empty when it can be sent with
/// `"strict": true`.
pub fn check_strict(schema: &Value) -> Vec<Incompatibility> {
    let mut problems = Vec::new();
    check_node(schema, "", &mut problems);
    problems
}

fn check_node(node: &Value, path: &str, problems: &mut Vec<Incompatibility>) {
    let Value::Object(map) = node else { return };
    for key in map.keys() {
        let at = format!("{path}/{}", escape(key));
        let unsupported =
            UNSUPPORTED.contains(&key.as_str()) || INEXPRESSIBLE.contains(&key.as_str());
        if unsupported || MOVED.contains(&key.as_str()) || key == "oneOf" {
            problems.push(Incompatibility::new(
                &at,
                format!("`{key}` is not supported by strict tool use"),
            ));
        }
        if key == "$ref" {
            problems.push(Incompatibility::new(
                &at,
                "references must be inlined for strict tool use",
            ));
        }
    }
    check_format(map, path, FORMATS, problems);
    if map
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 1)
    {
        problems.push(Incompatibility::new(
            &format!("{path}/minItems"),
            "only `minItems` of 0 or 1 is supported",
        ));
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && values
            .iter()
            .any(|value| value.is_object() || value.is_array())
    {
        problems.push(Incompatibility::new(
            &format!("{path}/enum"),
            "enum values must be strings, numbers, booleans or null",
        ));
    }
    if is_object_schema(map) && map.get("additionalProperties") != Some(&Value::Bool(false)) {
        problems.push(Incompatibility::new(
            &format!("{path}/additionalProperties"),
            "every object needs `additionalProperties: false` for strict tool use",
        ));
    }
    for_each_subschema(map, path, |child_path, child| {
        check_node(child, child_path, problems)
    });
}
