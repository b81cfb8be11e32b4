//! The strings a schema accepts, for a schema that accepts strings from a list and nothing
//! else: how a unit enum's schema looks (`{"type": "string", "enum": [...]}`, or a `oneOf` of
//! `{"type": "string", "const": ...}` when its variants are documented).

use serde_json::{Map, Value};

/// Keywords that describe and never reject.
pub(crate) const ANNOTATIONS: [&str; 7] = [
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "$comment",
];

/// How many `$ref`s in a row, or lists within lists, are followed before giving up (a cycle,
/// or a very long chain).
const MAX_DEPTH: usize = 8;

/// The strings `schema` accepts, if it accepts strings from a list and nothing else:
/// `enum` or `const` of strings (with `"type": "string"` or no type), `oneOf` or `anyOf` of
/// such schemas, a `$ref` into `defs` (`#/$defs/Name`) to one. `None` for any other schema,
/// or one that says anything more (a pattern, a length, a non-string value).
pub(crate) fn accepted_names(
    schema: &Value,
    defs: Option<&Map<String, Value>>,
) -> Option<Vec<String>> {
    names_within(schema, defs, MAX_DEPTH)
}

/// The schema a `{"$ref": "#/$defs/Name"}` (beside annotations only) refers to, followed a
/// few times; any other schema as it is.
pub(crate) fn referred<'a>(
    mut schema: &'a Value,
    defs: Option<&'a Map<String, Value>>,
) -> Option<&'a Value> {
    for _ in 0..MAX_DEPTH {
        let Some(target) = schema.get("$ref") else {
            return Some(schema);
        };
        let only_annotations = schema
            .as_object()?
            .keys()
            .all(|key| key == "$ref" || is_annotation(key));
        let name = target.as_str()?.strip_prefix("#/$defs/")?;
        schema = defs?.get(name).filter(|_| only_annotations)?;
    }
    None
}

fn names_within(
    schema: &Value,
    defs: Option<&Map<String, Value>>,
    depth: usize,
) -> Option<Vec<String>> {
    let schema = referred(schema, defs)?.as_object()?;
    let mut listed = None;
    for (key, value) in schema {
        let names = match key.as_str() {
            "type" if value == "string" => continue,
            "enum" => strings(value)?,
            "const" => vec![value.as_str()?.to_owned()],
            "oneOf" => branches(value, defs, depth.checked_sub(1)?, 1)?,
            "anyOf" => branches(value, defs, depth.checked_sub(1)?, usize::MAX)?,
            other if is_annotation(other) => continue,
            _ => return None,
        };
        // Two lists in one schema would each have to hold: not a shape handled here.
        if listed.replace(names).is_some() {
            return None;
        }
    }
    listed
}

/// Every entry a string.
fn strings(list: &Value) -> Option<Vec<String>> {
    list.as_array()?
        .iter()
        .map(|entry| entry.as_str().map(str::to_owned))
        .collect()
}

/// The names that at least one and at most `most` branches accept (`oneOf` accepts a value
/// exactly one branch accepts).
fn branches(
    list: &Value,
    defs: Option<&Map<String, Value>>,
    depth: usize,
    most: usize,
) -> Option<Vec<String>> {
    let each = list
        .as_array()?
        .iter()
        .map(|branch| names_within(branch, defs, depth))
        .collect::<Option<Vec<_>>>()?;
    let mut accepted: Vec<String> = Vec::new();
    for name in each.iter().flatten() {
        let count = each.iter().filter(|names| names.contains(name)).count();
        if count <= most && !accepted.contains(name) {
            accepted.push(name.clone());
        }
    }
    Some(accepted)
}

pub(crate) fn is_annotation(key: &str) -> bool {
    ANNOTATIONS.contains(&key)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The names `schema` accepts, with `$ref`s into a root's `$defs` of a day and a loop.
    fn names(schema: Value) -> Option<Vec<String>> {
        let defs = json!({
            "Day": {"enum": ["mon"]},
            "Loop": {"$ref": "#/$defs/Loop"},
            "Within": {"oneOf": [{"$ref": "#/$defs/Within"}]},
        });
        accepted_names(&schema, defs.as_object())
    }

    #[test]
    fn lists_of_strings_are_read_in_every_form_a_unit_enum_takes() {
        let listed = json!({"type": "string", "enum": ["a", "b"], "description": "Pick."});
        assert_eq!(names(listed), Some(vec!["a".into(), "b".into()]));
        assert_eq!(names(json!({"enum": ["a"]})), Some(vec!["a".into()]));
        let documented = json!({"oneOf": [
            {"type": "string", "const": "a", "description": "The first."},
            {"type": "string", "enum": ["b", "c"]},
        ]});
        assert_eq!(
            names(documented),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        let referred = json!({"$ref": "#/$defs/Day", "description": "A day."});
        assert_eq!(names(referred), Some(vec!["mon".into()]));
    }

    #[test]
    fn a_name_two_one_of_branches_accept_is_refused_by_the_schema() {
        let twice = json!({"oneOf": [{"const": "a"}, {"enum": ["a", "b"]}]});
        assert_eq!(names(twice), Some(vec!["b".into()]));
        let any = json!({"anyOf": [{"const": "a"}, {"enum": ["a", "b"]}]});
        assert_eq!(names(any), Some(vec!["a".into(), "b".into()]));
    }

    #[test]
    fn anything_else_is_not_a_list_of_names() {
        for schema in [
            json!({"type": "string"}),
            json!({"type": "integer", "enum": [1]}),
            json!({"enum": ["a", 1]}),
            json!({"enum": ["a", null]}),
            json!({"type": "string", "enum": ["a"], "maxLength": 0}),
            json!({"enum": ["a"], "const": "a"}),
            json!({"oneOf": [{"const": "a"}, {"type": "null"}]}),
            json!({"$ref": "#/$defs/Missing"}),
            json!({"$ref": "#/definitions/Day"}),
            json!({"$ref": "#/$defs/Day", "enum": ["mon"]}),
            json!({"$ref": "#/$defs/Loop"}),
            json!({"$ref": "#/$defs/Within"}),
            json!(true),
        ] {
            assert_eq!(names(schema.clone()), None, "{schema}");
        }
    }
}
