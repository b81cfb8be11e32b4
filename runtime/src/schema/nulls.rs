//! `null` for an optional property means "absent".
//!
//! Strict modes (OpenAI) show every property as required and optional ones as nullable, so
//! models send `null` for what they leave out. Where the canonical schema does not itself
//! accept `null` for such a property (say, `#[serde(default)] flag: bool`), the `null` is
//! removed before validation, so the call means what the model meant.

use serde_json::Value;

use super::{allows_null, required_names, resolve};

/// Deepest schema nesting followed; arguments are depth-limited well below this.
const MAX_DEPTH: usize = 128;

/// Whether any object in the schema has an optional property that does not accept `null`
/// (if none, [`remove_optional_nulls`] never changes anything and can be skipped).
pub(crate) fn has_optional_non_nullable(root: &Value) -> bool {
    fn walk(root: &Value, node: &Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let Some(map) = node.as_object() else {
            return false;
        };
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            let required = required_names(map);
            if properties.iter().any(|(name, schema)| {
                !required.contains(&name.as_str()) && !allows_null(target(root, schema))
            }) {
                return true;
            }
        }
        let mut found = false;
        super::for_each_subschema(map, "", |_, child| {
            found = found || walk(root, child, depth + 1)
        });
        found
    }
    walk(root, root, 0)
}

/// Removes `null` values of optional, non-nullable properties, following the schema
/// (properties, array items, local references).
pub(crate) fn remove_optional_nulls(root: &Value, arguments: &mut Value) {
    strip(root, root, arguments, 0);
}

fn strip(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = target(root, schema);
    match value {
        Value::Object(object) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = schema.as_object().map(required_names).unwrap_or_default();
            object.retain(|name, item| {
                let optional = !required.contains(&name.as_str());
                let property = properties.get(name);
                !(item.is_null()
                    && optional
                    && property.is_some_and(|p| !allows_null(target(root, p))))
            });
            for (name, item) in object.iter_mut() {
                if let Some(property) = properties.get(name) {
                    strip(root, property, item, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    strip(root, item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// A schema with a top-level `$ref` resolved (siblings ignored).
fn target<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| resolve(root, reference))
        .unwrap_or(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nulls_of_optional_non_nullable_properties_are_removed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "flag": {"type": "boolean"},
                "note": {"type": ["string", "null"]},
                "pet": {"$ref": "#/$defs/Pet"},
                "needed": {"type": "integer"}
            },
            "required": ["needed"],
            "$defs": {"Pet": {"type": "object", "properties": {"age": {"type": "integer"}}}}
        });
        assert!(has_optional_non_nullable(&schema));
        let mut arguments =
            json!({"flag": null, "note": null, "pet": {"age": null}, "needed": null});
        remove_optional_nulls(&schema, &mut arguments);
        // `note` accepts null, `needed` is required: both stay, for the validator to judge.
        assert_eq!(arguments, json!({"note": null, "pet": {}, "needed": null}));
    }

    #[test]
    fn schemas_without_such_properties_are_recognised() {
        let schema = json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "integer"}}, "required": ["b"]});
        assert!(!has_optional_non_nullable(&schema));
    }
}
