//! Gemini function declarations: the OpenAPI-style subset Gemini accepts. References are
//! inlined, `additionalProperties` removed, nullable unions collapsed into `nullable`, and
//! keywords it does not know removed or moved into descriptions.

use serde_json::{Map, Value, json};

use super::{
    INEXPRESSIBLE, Incompatibility, escape, for_each_subschema, for_each_subschema_mut,
    inlined_view, move_to_description, one_of_as_any_of,
};

/// Keywords a Gemini `Schema` has.
const ALLOWED: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];
/// Keywords with a meaning Gemini cannot express (besides [`INEXPRESSIBLE`]).
const UNSUPPORTED: &[&str] = &["allOf"];
/// Constraints Gemini lacks, carried in the description instead.
const MOVED: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
];

/// The Gemini view of a canonical input schema, or every reason it cannot be shown to Gemini.
pub fn declaration_schema(canonical: &Value) -> Result<Value, Vec<Incompatibility>> {
    inlined_view(canonical, transform, check)
}

fn transform(node: &mut Value, path: &str, problems: &mut Vec<Incompatibility>) {
    let Value::Object(map) = node else { return };
    match map.remove("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => problems.push(Incompatibility::new(
            &format!("{path}/additionalProperties"),
            "an open map: Gemini cannot express `additionalProperties`; use a struct, or a list of key/value pairs",
        )),
    }
    one_of_as_any_of(map);
    if let Some(value) = map.remove("const") {
        map.insert("enum".to_owned(), json!([value]));
    }
    collapse_type_list(map);
    collapse_null_branch(map);
    move_to_description(map, MOVED);
    keep_supported_format(map);
    if let Some(Value::Array(values)) = map.get("enum")
        && values.iter().any(|value| !value.is_string())
    {
        // Gemini enums are strings only: describe the values instead.
        let listed: Vec<String> = values.iter().map(Value::to_string).collect();
        map.remove("enum");
        super::append_description(map, &format!("one of {}", listed.join(", ")));
    }
    map.retain(|key, _| {
        ALLOWED.contains(&key.as_str())
            || UNSUPPORTED.contains(&key.as_str())
            || INEXPRESSIBLE.contains(&key.as_str())
    });
    for_each_subschema_mut(map, path, |child_path, child| {
        transform(child, child_path, problems)
    });
}

/// `"type": ["string", "null"]` → `"type": "string", "nullable": true`; several non-null
/// types become `anyOf`.
fn collapse_type_list(map: &mut Map<String, Value>) {
    let Some(Value::Array(kinds)) = map.get("type").cloned() else {
        return;
    };
    let nullable = kinds.iter().any(|kind| kind == "null");
    let others: Vec<Value> = kinds.into_iter().filter(|kind| kind != "null").collect();
    map.remove("type");
    match others.as_slice() {
        [] => {
            map.insert("type".to_owned(), json!("null"));
        }
        [single] => {
            map.insert("type".to_owned(), single.clone());
        }
        several => {
            let branches: Vec<Value> = several.iter().map(|kind| json!({"type": kind})).collect();
            map.insert("anyOf".to_owned(), Value::Array(branches));
        }
    }
    if nullable {
        map.insert("nullable".to_owned(), Value::Bool(true));
    }
}

/// `anyOf: [X, {"type": "null"}]` → X with `nullable: true`.
fn collapse_null_branch(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return;
    };
    let is_null = |branch: &Value| branch == &json!({"type": "null"});
    if !branches.iter().any(is_null) {
        return;
    }
    let rest: Vec<Value> = branches
        .iter()
        .filter(|branch| !is_null(branch))
        .cloned()
        .collect();
    map.remove("anyOf");
    map.insert("nullable".to_owned(), Value::Bool(true));
    match rest.as_slice() {
        [Value::Object(single)] => {
            for (key, value) in single {
                // The outer description (the parameter's) wins over the type's.
                map.entry(key.clone()).or_insert_with(|| value.clone());
            }
            collapse_type_list(map);
        }
        _ => {
            map.insert("anyOf".to_owned(), Value::Array(rest));
        }
    }
}

/// Gemini knows `date-time` and `enum` for strings, `float`/`double` and `int32`/`int64`.
fn keep_supported_format(map: &mut Map<String, Value>) {
    let keep = match (
        map.get("type").and_then(Value::as_str),
        map.get("format").and_then(Value::as_str),
    ) {
        (_, None) => return,
        (Some("string"), Some(format)) => matches!(format, "date-time" | "enum"),
        (Some("number"), Some(format)) => matches!(format, "float" | "double"),
        (Some("integer"), Some(format)) => matches!(format, "int32" | "int64"),
        _ => false,
    };
    if !keep {
        map.remove("format");
    }
}

/// Every way `schema` breaks Gemini's rules; empty when it can be a function declaration's
/// `parameters`.
pub fn check(schema: &Value) -> Vec<Incompatibility> {
    let mut problems = Vec::new();
    check_node(schema, "", &mut problems);
    problems
}

fn check_node(node: &Value, path: &str, problems: &mut Vec<Incompatibility>) {
    let Value::Object(map) = node else { return };
    for key in map.keys() {
        if !ALLOWED.contains(&key.as_str()) {
            problems.push(Incompatibility::new(
                &format!("{path}/{}", escape(key)),
                format!("Gemini does not support `{key}`"),
            ));
        }
    }
    if map.get("type").is_some_and(Value::is_array) {
        problems.push(Incompatibility::new(
            &format!("{path}/type"),
            "Gemini needs one type; use `nullable` for null",
        ));
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && values.iter().any(|value| !value.is_string())
    {
        problems.push(Incompatibility::new(
            &format!("{path}/enum"),
            "Gemini enum values must be strings",
        ));
    }
    for_each_subschema(map, path, |child_path, child| {
        check_node(child, child_path, problems)
    });
}
