//! The proof that lets a call skip building a JSON value and checking it: for a `#[tool]`
//! whose parameter types serde reads exactly (`crate::exact`), every argument object serde
//! reads into them is one the tool's input schema accepts. Proven once, at build, against
//! the schema the model is shown; a schema that says anything more (a range, a pattern, a
//! length) is not proven, and its calls are checked as before.
//!
//! Arguments serde cannot read go the checked way too, so a model sees exactly the errors it
//! would have seen: the shortcut only ever accepts what the schema accepts.

use serde_json::{Map, Value};

use crate::exact::{
    ANNOTATIONS, ExactField, ExactInvoke, NowInvoke, Shape, accepted_names, is_annotation, referred,
};

/// How a proven tool reads its arguments straight into its parameter types.
#[derive(Clone, Copy)]
pub(crate) struct ExactRead {
    pub(crate) invoke: ExactInvoke,
    /// For a function that finishes when first polled: read and run in place.
    pub(crate) now: Option<NowInvoke>,
    /// The deepest nesting a readable argument object can have (`{}` is 1).
    pub(crate) depth: usize,
}

/// Whether every object serde reads into `fields` (with unknown keys refused) is accepted by
/// `schema`.
pub(crate) fn proven(fields: &[ExactField], schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return false;
    };
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return false;
    };
    let required_ok = match schema.get("required") {
        None => true,
        Some(Value::Array(required)) => required.iter().all(|key| {
            fields.iter().any(|field| {
                key.as_str() == Some(field.key) && !matches!(field.shape, Shape::Optional(_))
            })
        }),
        Some(_) => false,
    };
    let only_known = schema.iter().all(|(key, value)| match key.as_str() {
        "type" => value == "object",
        // serde refuses unknown keys, so what the schema says of them never applies; the
        // definitions apply only where a property refers to them.
        "properties" | "required" | "additionalProperties" | "$defs" => true,
        other => ANNOTATIONS.contains(&other),
    });
    let defs = match schema.get("$defs") {
        None => None,
        Some(Value::Object(defs)) => Some(defs),
        Some(_) => return false,
    };
    required_ok
        && only_known
        && properties.len() == fields.len()
        && fields.iter().all(|field| {
            properties
                .get(field.key)
                .is_some_and(|property| accepts(&field.shape, property, defs))
        })
}

/// The deepest nesting an object of `fields` can have.
pub(crate) fn depth(fields: &[ExactField]) -> usize {
    1 + fields
        .iter()
        .map(|field| field.shape.depth())
        .max()
        .unwrap_or(0)
}

/// Whether `schema` accepts every value serde reads as `shape` (`$ref`s into `defs` followed).
fn accepts(shape: &Shape, schema: &Value, defs: Option<&Map<String, Value>>) -> bool {
    if let Shape::Named(names) = shape {
        // Read as one of `names` only: the schema must accept each.
        return accepted_names(schema, defs)
            .is_some_and(|accepted| names.iter().all(|name| accepted.contains(name)));
    }
    let Some(schema) = referred(schema, defs).and_then(Value::as_object) else {
        return false;
    };
    if let Shape::Optional(inner) = shape {
        return accepts_optional(inner, schema, defs);
    }
    let Some(Value::String(kind)) = schema.get("type") else {
        return false;
    };
    let rest = |allowed: &[&str]| {
        schema
            .keys()
            .all(|key| key == "type" || allowed.contains(&key.as_str()) || is_annotation(key))
    };
    match shape {
        Shape::Integer { min, max, format } => {
            kind == "integer"
                && rest(&["format", "minimum", "maximum"])
                && schema.get("format").is_none_or(|given| given == format)
                && bound(schema, "minimum").is_none_or(|minimum| minimum <= *min as f64)
                && bound(schema, "maximum").is_none_or(|maximum| maximum >= *max as f64)
        }
        Shape::Boolean => kind == "boolean" && rest(&[]),
        Shape::String => kind == "string" && rest(&[]),
        Shape::Array(items) => {
            kind == "array"
                && rest(&["items"])
                && schema
                    .get("items")
                    .is_some_and(|each| accepts(items, each, defs))
        }
        Shape::Optional(_) | Shape::Named(_) => unreachable!("handled above"),
    }
}

/// The inner shape's schema that also takes `null`: `{"type": [<inner's type>, "null"], ...}`,
/// or `anyOf`/`oneOf` of the inner shape's schema and `{"type": "null"}`.
fn accepts_optional(
    inner: &Shape,
    schema: &Map<String, Value>,
    defs: Option<&Map<String, Value>>,
) -> bool {
    if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
        return or_null(inner, schema, branches, defs);
    }
    let Some(Value::Array(kinds)) = schema.get("type") else {
        return false;
    };
    let [first, second] = kinds.as_slice() else {
        return false;
    };
    let kind = match (first.as_str(), second.as_str()) {
        (Some("null"), Some(kind)) | (Some(kind), Some("null")) => kind,
        _ => return false,
    };
    let mut without_null = schema.clone();
    without_null.insert("type".to_owned(), Value::String(kind.to_owned()));
    accepts(inner, &Value::Object(without_null), defs)
}

/// `{"anyOf" | "oneOf": [<inner's schema>, {"type": "null"}]}` (either order), with
/// annotations only beside it. `oneOf` holds too: the inner shapes never read `null`, so no
/// value matches both branches.
fn or_null(
    inner: &Shape,
    schema: &Map<String, Value>,
    branches: &Value,
    defs: Option<&Map<String, Value>>,
) -> bool {
    let one_list = schema
        .keys()
        .all(|key| key == "anyOf" || key == "oneOf" || is_annotation(key))
        && !(schema.contains_key("anyOf") && schema.contains_key("oneOf"));
    let Some([first, second]) = branches.as_array().map(Vec::as_slice) else {
        return false;
    };
    let is_null = |branch: &Value| {
        branch.as_object().is_some_and(|branch| {
            branch.get("type").is_some_and(|kind| kind == "null")
                && branch.keys().all(|key| key == "type" || is_annotation(key))
        })
    };
    let other = match (is_null(first), is_null(second)) {
        (true, false) => second,
        (false, true) => first,
        _ => return false,
    };
    one_list && accepts(inner, other, defs)
}

/// A numeric bound; a bound that is not a number counts as infinitely strict.
fn bound(schema: &Map<String, Value>, key: &str) -> Option<f64> {
    schema
        .get(key)
        .map(|value| value.as_f64().unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::exact::ExactShape;

    fn fields() -> Vec<ExactField> {
        vec![
            ExactField {
                key: "count",
                shape: u32::shape(),
            },
            ExactField {
                key: "tags",
                shape: <Option<Vec<String>>>::shape(),
            },
        ]
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "description": "Count things.",
            "properties": {
                "count": {"type": "integer", "format": "uint32", "minimum": 0, "description": "How many."},
                "tags": {"type": ["array", "null"], "items": {"type": "string"}}
            },
            "required": ["count"],
            "additionalProperties": false
        })
    }

    fn changed(change: impl FnOnce(&mut Value)) -> bool {
        let mut schema = schema();
        change(&mut schema);
        proven(&fields(), &schema)
    }

    #[test]
    fn a_schema_that_says_what_the_types_say_is_proven() {
        assert!(proven(&fields(), &schema()));
        assert_eq!(depth(&fields()), 2);
        // Leaving out what serde requires, or allowing more keys, only makes the schema looser.
        assert!(changed(|schema| {
            schema.as_object_mut().unwrap().remove("required");
        }));
        assert!(changed(
            |schema| schema["additionalProperties"] = json!(true)
        ));
    }

    #[test]
    fn anything_stricter_than_the_types_is_not() {
        let stricter: [fn(&mut Value); 9] = [
            |schema| schema["properties"]["count"]["minimum"] = json!(1),
            |schema| schema["properties"]["count"]["maximum"] = json!(10),
            |schema| schema["properties"]["count"]["minimum"] = json!("0"),
            |schema| schema["properties"]["count"]["format"] = json!("int8"),
            |schema| schema["properties"]["tags"]["items"]["pattern"] = json!("^a"),
            |schema| schema["properties"]["tags"]["maxItems"] = json!(2),
            |schema| schema["properties"]["tags"]["type"] = json!("array"),
            |schema| schema["required"] = json!(["count", "tags"]),
            |schema| schema["properties"]["count"] = json!({"$ref": "#/$defs/Count"}),
        ];
        for change in stricter {
            assert!(!changed(change), "{}", {
                let mut schema = schema();
                change(&mut schema);
                schema
            });
        }
        assert!(!changed(|schema| schema["minProperties"] = json!(1)));
        assert!(!changed(|schema| {
            schema["properties"]["extra"] = json!({"type": "string"});
        }));
    }

    #[test]
    fn a_unit_enum_is_proven_where_the_schema_accepts_each_of_its_names() {
        let names = Shape::Named(vec!["mon".into(), "tue".into()]);
        let optional = |property: Value| {
            let fields = [ExactField {
                key: "day",
                shape: Shape::Optional(Box::new(names.clone())),
            }];
            let schema = json!({
                "type": "object",
                "properties": {"day": property},
                "$defs": {"Day": {"type": "string", "enum": ["mon", "tue"]}, "Mon": {"enum": ["mon"]}},
            });
            proven(&fields, &schema)
        };
        assert!(optional(json!({
            "anyOf": [{"$ref": "#/$defs/Day"}, {"type": "null"}],
            "description": "The day.",
        })));
        assert!(optional(
            json!({"oneOf": [{"type": "null"}, {"enum": ["tue", "mon", "wed"]}]})
        ));
        for refused in [
            // A name the schema does not accept.
            json!({"anyOf": [{"$ref": "#/$defs/Mon"}, {"type": "null"}]}),
            // `null` not accepted, or accepted only under a further condition.
            json!({"$ref": "#/$defs/Day"}),
            json!({"anyOf": [{"$ref": "#/$defs/Day"}, {"type": "null", "maxLength": 1}]}),
            json!({"anyOf": [{"$ref": "#/$defs/Day"}, {"type": "null"}], "minLength": 1}),
            json!({"anyOf": [{"$ref": "#/$defs/Day"}, {"type": "null"}, {"type": "integer"}]}),
            // A form left to the checked path.
            json!({"type": ["string", "null"], "enum": ["mon", "tue", null]}),
        ] {
            assert!(!optional(refused.clone()), "{refused}");
        }
    }
}
