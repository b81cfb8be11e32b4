//! Inlining local `$ref`s, for providers that accept no references (and to remove siblings
//! of `$ref`). Recursive types are reported, never looped on.

use serde_json::{Map, Value};

use super::{Incompatibility, for_each_subschema_mut};
use crate::schema::resolve;

/// `schema` with every `$ref` replaced by its target (siblings of the `$ref` kept on top),
/// and `$defs`/`definitions` removed. A reference cycle is an incompatibility at the
/// place it closes.
pub(crate) fn inline_all(root: &Value) -> Result<Value, Vec<Incompatibility>> {
    let mut problems = Vec::new();
    let mut schema = root.clone();
    let mut stack = Vec::new();
    inline(root, &mut schema, "", &mut stack, &mut problems);
    if let Value::Object(map) = &mut schema {
        map.remove("$defs");
        map.remove("definitions");
    }
    if problems.is_empty() {
        Ok(schema)
    } else {
        Err(problems)
    }
}

/// Replaces one `$ref` node by its target, merged with the node's other keywords.
/// `None` when the target is missing or would recurse.
pub(crate) fn expand_reference(
    root: &Value,
    node: &Map<String, Value>,
    path: &str,
    stack: &[String],
    problems: &mut Vec<Incompatibility>,
) -> Option<(String, Map<String, Value>)> {
    let reference = node.get("$ref")?.as_str()?.to_owned();
    if stack.contains(&reference) || reference == "#" {
        problems.push(Incompatibility::new(
            path,
            format!("recursive type: `{reference}` refers back to itself, which this provider cannot express"),
        ));
        return None;
    }
    let Some(Value::Object(target)) = resolve(root, &reference) else {
        problems.push(Incompatibility::new(
            path,
            format!("`$ref` to `{reference}`, which this schema does not define"),
        ));
        return None;
    };
    let mut merged = target.clone();
    for (key, value) in node {
        if key != "$ref" {
            merged.insert(key.clone(), value.clone());
        }
    }
    Some((reference, merged))
}

fn inline(
    root: &Value,
    schema: &mut Value,
    path: &str,
    stack: &mut Vec<String>,
    problems: &mut Vec<Incompatibility>,
) {
    let Value::Object(map) = schema else { return };
    if map.contains_key("$ref") {
        match expand_reference(root, map, path, stack, problems) {
            Some((reference, merged)) => {
                *map = merged;
                stack.push(reference);
                inline(root, schema, path, stack, problems);
                stack.pop();
            }
            None => {
                map.remove("$ref");
            }
        }
        return;
    }
    map.remove("$defs");
    map.remove("definitions");
    for_each_subschema_mut(map, path, |child_path, child| {
        inline(root, child, child_path, stack, problems)
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::inline_all;

    #[test]
    fn references_are_inlined_with_their_siblings() {
        let schema = json!({
            "type": "object",
            "properties": {"pet": {"$ref": "#/$defs/Pet", "description": "The pet."}},
            "$defs": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "description": "A pet."}}
        });
        assert_eq!(
            inline_all(&schema).unwrap(),
            json!({
                "type": "object",
                "properties": {"pet": {"type": "object", "properties": {"name": {"type": "string"}}, "description": "The pet."}}
            })
        );
    }

    #[test]
    fn recursion_is_reported_not_looped_on() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
        });
        let problems = inline_all(&schema).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].path,
            "/properties/tree/properties/children/items"
        );
        assert!(problems[0].reason.starts_with("recursive type"));
    }
}
