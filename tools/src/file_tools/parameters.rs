//! A tool file's `parameters`: a JSON Schema object as it is, or the compact form
//! `name: {type, description, required, default, enum, ...}` turned into one.

use serde_json::{Map, Value, json};

const TYPES: &[&str] = &["string", "integer", "number", "boolean", "array", "object"];

/// Keys of one compact parameter, and the JSON Schema keyword each becomes.
const KEYS: &[(&str, &str)] = &[
    ("type", "type"),
    ("description", "description"),
    ("default", "default"),
    ("enum", "enum"),
    ("items", "items"),
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("min_length", "minLength"),
    ("max_length", "maxLength"),
    ("min_items", "minItems"),
    ("max_items", "maxItems"),
    ("pattern", "pattern"),
    ("format", "format"),
];

/// The input schema the parameters describe (no parameters: an empty object).
pub(crate) fn input_schema(parameters: Option<&Value>) -> Result<Value, String> {
    let Some(parameters) = parameters else {
        return Ok(json!({"type": "object", "properties": {}, "additionalProperties": false}));
    };
    let Value::Object(entries) = parameters else {
        return Err("`parameters` is a JSON Schema object or a map of parameters".to_owned());
    };
    match entries.get("type") {
        Some(Value::String(kind)) if kind == "object" => Ok(parameters.clone()),
        Some(Value::String(kind)) => Err(format!(
            "`parameters` as a JSON Schema must have `type: object` at its root, not `{kind}`"
        )),
        _ => compact(entries),
    }
}

fn compact(entries: &Map<String, Value>) -> Result<Value, String> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, written) in entries {
        let (schema, is_required) =
            parameter(written).map_err(|why| format!("parameter `{name}`: {why}"))?;
        if is_required {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name.clone(), schema);
    }
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }))
}

/// One parameter's schema, and whether it is required (by default: yes, unless it has a
/// default).
fn parameter(written: &Value) -> Result<(Value, bool), String> {
    let fields = match written {
        Value::String(kind) => return Ok((json!({"type": checked_type(kind)?}), true)),
        Value::Object(fields) => fields,
        _ => return Err("write a type (`string`) or a map (`{type: string, ...}`)".to_owned()),
    };
    let mut schema = Map::new();
    let mut required = !fields.contains_key("default");
    for (key, value) in fields {
        if key == "required" {
            required = value.as_bool().ok_or("`required` is true or false")?;
            continue;
        }
        let Some((_, keyword)) = KEYS.iter().find(|(written, _)| written == key) else {
            let known: Vec<&str> = KEYS.iter().map(|(written, _)| *written).collect();
            return Err(format!(
                "unknown key `{key}`; the keys are required, {}",
                known.join(", ")
            ));
        };
        let value = match key.as_str() {
            "type" => Value::String(checked_type(value.as_str().unwrap_or("?"))?.to_owned()),
            "items" => parameter(value)?.0,
            _ => value.clone(),
        };
        schema.insert((*keyword).to_owned(), value);
    }
    if !schema.contains_key("type") && !schema.contains_key("enum") {
        return Err(
            "give its `type` (one of string, integer, number, boolean, array, object)".to_owned(),
        );
    }
    Ok((Value::Object(schema), required))
}

fn checked_type(kind: &str) -> Result<&str, String> {
    TYPES
        .iter()
        .find(|known| **known == kind)
        .copied()
        .ok_or_else(|| format!("type `{kind}` is not one of {}", TYPES.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_form_becomes_a_closed_object_schema() {
        let written = json!({
            "city": {"type": "string", "description": "Where."},
            "days": {"type": "integer", "default": 3, "minimum": 1, "maximum": 7},
            "units": {"type": "string", "enum": ["metric", "imperial"], "required": false},
            "tags": {"type": "array", "items": "string", "max_items": 5},
            "verbose": "boolean",
        });
        let schema = input_schema(Some(&written)).unwrap();
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["city", "tags", "verbose"]));
        assert_eq!(schema["properties"]["days"]["default"], 3);
        assert_eq!(
            schema["properties"]["tags"]["items"],
            json!({"type": "string"})
        );
        assert_eq!(schema["properties"]["tags"]["maxItems"], 5);
    }

    #[test]
    fn a_json_schema_is_kept_and_mistakes_are_named() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        assert_eq!(input_schema(Some(&schema)).unwrap(), schema);
        let wrong_root = input_schema(Some(&json!({"type": "string"}))).unwrap_err();
        assert!(wrong_root.contains("`type: object`"), "{wrong_root}");
        let typo = input_schema(Some(&json!({"q": {"type": "strng"}}))).unwrap_err();
        assert_eq!(
            typo,
            "parameter `q`: type `strng` is not one of string, integer, number, boolean, array, object"
        );
        let unknown =
            input_schema(Some(&json!({"q": {"type": "string", "maxlen": 3}}))).unwrap_err();
        assert!(
            unknown.starts_with("parameter `q`: unknown key `maxlen`"),
            "{unknown}"
        );
    }
}
