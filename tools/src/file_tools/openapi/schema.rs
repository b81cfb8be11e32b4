//! OpenAPI schemas as the JSON Schema a tool's parameters take: `$ref`s put in place,
//! 3.0's `nullable` made a type that admits `null`, OpenAPI's own keywords left out.

use serde_json::{Map, Value, json};

/// How deep `$ref`s are followed (a schema that refers to itself stops here).
const MOST_DEPTH: usize = 12;

/// Keywords of OpenAPI's schema objects that JSON Schema does not have.
const OPENAPI_ONLY: [&str; 5] = [
    "discriminator",
    "xml",
    "externalDocs",
    "example",
    "nullable",
];

/// `value` with every `$ref` into `doc` put in place, ready for a tool's schema.
pub(super) fn resolved(doc: &Value, value: &Value) -> Value {
    resolve(doc, value, 0)
}

fn resolve(doc: &Value, value: &Value, depth: usize) -> Value {
    match value {
        Value::Object(object) => {
            if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
                let target = reference
                    .strip_prefix('#')
                    .and_then(|pointer| doc.pointer(pointer));
                return match target {
                    Some(target) if depth < MOST_DEPTH => resolve(doc, target, depth + 1),
                    _ => json!({"description": format!("(see {reference})")}),
                };
            }
            let mut out = Map::new();
            for (key, inner) in object {
                if !OPENAPI_ONLY.contains(&key.as_str()) {
                    out.insert(key.clone(), resolve(doc, inner, depth));
                }
            }
            if object.get("nullable") == Some(&Value::Bool(true))
                && let Some(Value::String(kind)) = out.get("type").cloned()
            {
                out.insert("type".into(), json!([kind, "null"]));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| resolve(doc, item, depth)).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_put_in_place_and_nullable_admits_null() {
        let doc = json!({"components": {"schemas": {
            "Item": {"type": "object", "properties": {"note": {"type": "string", "nullable": true, "example": "x"}}},
            "Loop": {"$ref": "#/components/schemas/Loop"}
        }}});
        let item = resolved(&doc, &json!({"$ref": "#/components/schemas/Item"}));
        assert_eq!(
            item,
            json!({"type": "object", "properties": {"note": {"type": ["string", "null"]}}})
        );
        let looped = resolved(&doc, &json!({"$ref": "#/components/schemas/Loop"}));
        assert_eq!(
            looped,
            json!({"description": "(see #/components/schemas/Loop)"})
        );
    }
}
