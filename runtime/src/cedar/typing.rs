//! A tool's argument JSON Schema as Cedar types, exactly where they are exact, and its
//! checked arguments as Cedar values of those types.
//!
//! | JSON Schema | Cedar |
//! |---|---|
//! | `string`, a `string` enum | `String` |
//! | `integer`, an `integer` enum | `Long` |
//! | `boolean` | `Bool` |
//! | `array` of a type below | `Set` of it (order and repeats are not kept) |
//! | `object` with `properties` | a record; optional where not `required` or nullable |
//!
//! What has no exact Cedar type is left out of the typed context, with the reason, and a
//! rule that names it is a build problem saying so: a `number` (a fraction has no exact
//! Cedar value), a union of types, a map of any keys.

use cedar_policy::RestrictedExpression;
use serde_json::{Map, Value, json};

/// How deep a schema is followed (through `$ref`s and nesting).
const DEEPEST: usize = 16;

/// A Cedar type an argument is given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CedarType {
    String,
    Long,
    Bool,
    Set(Box<CedarType>),
    Record(Vec<Field>),
}

/// One attribute of a record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) ty: CedarType,
    pub(crate) required: bool,
}

/// An argument (by its path, `amount` or `order.lines`) left out of the typed context.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LeftOut {
    pub(crate) path: String,
    pub(crate) why: &'static str,
}

/// The record type of a tool's arguments, and what was left out of it.
pub(crate) fn arguments_type(schema: &Value) -> (CedarType, Vec<LeftOut>) {
    let mut left_out = Vec::new();
    let typing = Typing { root: schema };
    let record = match typing.of(schema, "", 0, &mut left_out) {
        Some((record @ CedarType::Record(_), _)) => record,
        _ => CedarType::Record(Vec::new()),
    };
    (record, left_out)
}

struct Typing<'a> {
    root: &'a Value,
}

impl Typing<'_> {
    /// The type of `schema` and whether it admits `null`; `None` when it has no exact
    /// Cedar type (noted in `left_out`, at `path`).
    fn of(
        &self,
        schema: &Value,
        path: &str,
        depth: usize,
        left_out: &mut Vec<LeftOut>,
    ) -> Option<(CedarType, bool)> {
        let leave = |left_out: &mut Vec<LeftOut>, why| {
            left_out.push(LeftOut {
                path: path.to_owned(),
                why,
            });
            None
        };
        if depth > DEEPEST {
            return leave(left_out, "it is nested too deeply to be typed");
        }
        let schema = self.resolved(schema);
        if let Some(alternatives) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
            return self.nullable(alternatives, path, depth, left_out);
        }
        let (kind, nullable) = match schema.get("type") {
            Some(Value::String(kind)) => (kind.as_str(), false),
            Some(Value::Array(kinds)) => match non_null(kinds) {
                Some(kind) => (kind, kinds.len() == 2),
                None => {
                    return leave(
                        left_out,
                        "it may be of several types, which Cedar cannot type",
                    );
                }
            },
            _ if schema.get("enum").is_some() => (enum_kind(schema), false),
            _ => return leave(left_out, "its schema names no type"),
        };
        let ty = match kind {
            "string" => CedarType::String,
            "integer" => CedarType::Long,
            "boolean" => CedarType::Bool,
            "number" => {
                return leave(
                    left_out,
                    "it is a number that may have a fraction, which Cedar cannot compare exactly (make it an integer, e.g. cents)",
                );
            }
            "array" => {
                let items = schema.get("items").unwrap_or(&Value::Null);
                let (item, _) = self.of(items, path, depth + 1, left_out)?;
                CedarType::Set(Box::new(item))
            }
            "object" => self.record(schema, path, depth, left_out)?,
            _ => return leave(left_out, "its type has no Cedar counterpart"),
        };
        Some((ty, nullable))
    }

    /// `anyOf` / `oneOf`: typed only as one type or `null`.
    fn nullable(
        &self,
        alternatives: &Value,
        path: &str,
        depth: usize,
        left_out: &mut Vec<LeftOut>,
    ) -> Option<(CedarType, bool)> {
        let alternatives = alternatives
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let is_null = |schema: &Value| self.resolved(schema).get("type") == Some(&json!("null"));
        let others: Vec<&Value> = alternatives
            .iter()
            .filter(|schema| !is_null(schema))
            .collect();
        match others.as_slice() {
            [only] => self
                .of(only, path, depth + 1, left_out)
                .map(|(ty, _)| (ty, others.len() < alternatives.len())),
            _ => {
                left_out.push(LeftOut {
                    path: path.to_owned(),
                    why: "it is one of several shapes, which Cedar cannot type",
                });
                None
            }
        }
    }

    fn record(
        &self,
        schema: &Value,
        path: &str,
        depth: usize,
        left_out: &mut Vec<LeftOut>,
    ) -> Option<CedarType> {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            left_out.push(LeftOut {
                path: path.to_owned(),
                why: "it is a map of any keys, which has no Cedar record type",
            });
            return None;
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        for (name, property) in properties {
            let inner = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            if let Some((ty, nullable)) = self.of(property, &inner, depth + 1, left_out) {
                let required = required.contains(&name.as_str()) && !nullable;
                fields.push(Field {
                    name: name.clone(),
                    ty,
                    required,
                });
            }
        }
        Some(CedarType::Record(fields))
    }

    /// A local `$ref` followed (`#/$defs/...`, `#/definitions/...`).
    fn resolved<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let mut schema = schema;
        for _ in 0..DEEPEST {
            match schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
            {
                Some(pointer) => match self.root.pointer(pointer) {
                    Some(target) => schema = target,
                    None => return schema,
                },
                None => return schema,
            }
        }
        schema
    }
}

fn non_null(kinds: &[Value]) -> Option<&str> {
    let named: Vec<&str> = kinds
        .iter()
        .filter_map(Value::as_str)
        .filter(|kind| *kind != "null")
        .collect();
    match named.as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

/// An enum's kind, from its values: `string`, `integer`, or none when they are mixed.
fn enum_kind(schema: &Value) -> &'static str {
    let values = schema["enum"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if values.iter().all(Value::is_string) {
        "string"
    } else if values.iter().all(|value| value.is_i64()) {
        "integer"
    } else {
        "mixed"
    }
}

impl CedarType {
    /// The type as a Cedar JSON schema writes it.
    pub(crate) fn schema(&self) -> Value {
        match self {
            CedarType::String => json!({"type": "String"}),
            CedarType::Long => json!({"type": "Long"}),
            CedarType::Bool => json!({"type": "Boolean"}),
            CedarType::Set(item) => json!({"type": "Set", "element": item.schema()}),
            CedarType::Record(fields) => {
                let attributes: Map<String, Value> = fields
                    .iter()
                    .map(|field| {
                        let mut ty = field.ty.schema();
                        ty["required"] = json!(field.required);
                        (field.name.clone(), ty)
                    })
                    .collect();
                json!({"type": "Record", "attributes": attributes})
            }
        }
    }

    /// `value` as a Cedar value of this type; `None` where it does not fit (a record keeps
    /// the attributes that fit, and is `None` only if a required one does not).
    pub(crate) fn value(&self, value: &Value) -> Option<RestrictedExpression> {
        match (self, value) {
            (CedarType::String, Value::String(text)) => {
                Some(RestrictedExpression::new_string(text.clone()))
            }
            (CedarType::Long, Value::Number(number)) => {
                number.as_i64().map(RestrictedExpression::new_long)
            }
            (CedarType::Bool, Value::Bool(flag)) => Some(RestrictedExpression::new_bool(*flag)),
            (CedarType::Set(item), Value::Array(items)) => {
                let values: Option<Vec<_>> = items.iter().map(|v| item.value(v)).collect();
                values.map(RestrictedExpression::new_set)
            }
            (CedarType::Record(fields), Value::Object(object)) => record_value(fields, object),
            _ => None,
        }
    }
}

fn record_value(fields: &[Field], object: &Map<String, Value>) -> Option<RestrictedExpression> {
    let mut attributes = Vec::with_capacity(fields.len());
    for field in fields {
        match object
            .get(&field.name)
            .filter(|value| !value.is_null())
            .map(|v| field.ty.value(v))
        {
            Some(Some(value)) => attributes.push((field.name.clone(), value)),
            _ if field.required => return None,
            _ => {}
        }
    }
    RestrictedExpression::new_record(attributes).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{CedarType, Field, arguments_type};

    #[test]
    fn exact_types_are_kept_and_the_others_left_out_with_why() {
        let schema = json!({
            "type": "object",
            "properties": {
                "amount": {"type": "integer"},
                "note": {"type": ["string", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "price": {"type": "number"},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                "kind": {"enum": ["a", "b"]},
                "pet": {"$ref": "#/$defs/Pet"},
            },
            "required": ["amount", "note", "tags", "pet"],
            "$defs": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
        });
        let (record, left_out) = arguments_type(&schema);
        let CedarType::Record(fields) = record else {
            panic!("a record")
        };
        let field = |name: &str| fields.iter().find(|field| field.name == name).cloned();
        assert_eq!(
            field("amount"),
            Some(Field {
                name: "amount".into(),
                ty: CedarType::Long,
                required: true
            })
        );
        assert!(!field("note").unwrap().required, "nullable is optional");
        assert_eq!(
            field("tags").unwrap().ty,
            CedarType::Set(Box::new(CedarType::String))
        );
        assert_eq!(field("kind").unwrap().ty, CedarType::String);
        assert!(matches!(field("pet").unwrap().ty, CedarType::Record(_)));
        let mut out: Vec<&str> = left_out.iter().map(|left| left.path.as_str()).collect();
        out.sort();
        assert_eq!(out, ["either", "extra", "price"]);
        let price = left_out.iter().find(|left| left.path == "price").unwrap();
        assert!(price.why.contains("fraction"));
    }

    #[test]
    fn values_are_converted_by_their_type() {
        let (record, _) = arguments_type(&json!({"type": "object", "properties": {
            "amount": {"type": "integer"}, "note": {"type": "string"}}, "required": ["amount"]}));
        assert!(record.value(&json!({"amount": 5, "note": "x"})).is_some());
        assert!(
            record.value(&json!({"amount": 5})).is_some(),
            "optional left absent"
        );
        assert!(
            record.value(&json!({"note": "x"})).is_none(),
            "a required one missing"
        );
        assert!(
            record.value(&json!({"amount": 1.5})).is_none(),
            "not a Long"
        );
    }
}
