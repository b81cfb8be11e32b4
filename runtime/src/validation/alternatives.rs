//! What an `anyOf`/`oneOf` allows, in words a model can act on: the values of an enum
//! however schemars writes it (`enum`, `const` per documented variant, `null` for an
//! `Option`), and the shape of each variant of a tagged enum.

use serde_json::Value;

use crate::schema::required_names;

/// Most alternatives described; the rest are counted.
const MAX_ALTERNATIVES: usize = 30;
/// How deep nested `anyOf`/`oneOf`/`$ref` are followed.
const MAX_DEPTH: usize = 6;

/// The allowed forms of the `anyOf`/`oneOf` whose keyword is at `keyword_path` (a JSON
/// pointer into `root`, without `$ref` traversals).
pub(crate) fn allowed_forms(root: &Value, keyword_path: &str) -> Vec<String> {
    let Some(Value::Array(alternatives)) = root.pointer(keyword_path) else {
        return Vec::new();
    };
    let mut forms = Vec::new();
    for alternative in alternatives {
        describe(root, alternative, 0, &mut forms);
    }
    forms.dedup();
    if forms.len() > MAX_ALTERNATIVES {
        let more = forms.len() - MAX_ALTERNATIVES;
        forms.truncate(MAX_ALTERNATIVES);
        forms.push(format!("and {more} more"));
    }
    forms
}

fn describe(root: &Value, schema: &Value, depth: usize, forms: &mut Vec<String>) {
    let schema = resolve(root, schema, depth);
    if depth > MAX_DEPTH {
        forms.push("another form".to_owned());
        return;
    }
    if let Some(value) = schema.get("const") {
        forms.push(value.to_string());
        return;
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        forms.extend(values.iter().map(Value::to_string));
        return;
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(nested)) = schema.get(keyword) {
            for alternative in nested {
                describe(root, alternative, depth + 1, forms);
            }
            return;
        }
    }
    forms.push(shape(root, schema, depth));
}

/// A schema's shape: `null`, `a string`, or an object with its tag and required fields.
fn shape(root: &Value, schema: &Value, depth: usize) -> String {
    match schema.get("type").and_then(Value::as_str) {
        Some("null") => "null".to_owned(),
        Some("object") | None if schema.get("properties").is_some() => object(root, schema, depth),
        Some(kind) => format!("{} {kind}", article(kind)),
        None => "a value of another form".to_owned(),
    }
}

/// `{"type": "circle", "radius": …}`: fixed values shown, required fields named.
fn object(root: &Value, schema: &Value, depth: usize) -> String {
    let required = schema.as_object().map(required_names).unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return "an object".to_owned();
    };
    let fields: Vec<String> = properties
        .iter()
        .filter(|(name, _)| required.contains(&name.as_str()))
        .map(|(name, property)| {
            let property = resolve(root, property, depth + 1);
            let fixed = property.get("const").or_else(|| {
                property
                    .get("enum")
                    .and_then(Value::as_array)
                    .filter(|values| values.len() == 1)
                    .and_then(|values| values.first())
            });
            match fixed {
                Some(value) => format!("\"{name}\": {value}"),
                None => format!("\"{name}\": …"),
            }
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

fn article(kind: &str) -> &'static str {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Follows local `$ref`s (`#/$defs/...`), a bounded number of times.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value, depth: usize) -> &'a Value {
    for _ in depth..=MAX_DEPTH {
        let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer))
        else {
            break;
        };
        schema = target;
    }
    schema
}
