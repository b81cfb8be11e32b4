//! `--param value` pairs typed by the tool's schema: a string parameter takes the text as
//! it is; any other takes JSON (`--days 2`, `--tags '["a"]'`), or the text when it is not
//! JSON (the registry then says what the schema wanted). A boolean flag alone is `true`.

use serde_json::{Map, Value};

/// The words of `text`, with '…' or "…" quoting spaces.
pub(super) fn words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if quote.is_some() {
        return Err("a quote is not closed".to_owned());
    }
    if started {
        words.push(word);
    }
    Ok(words)
}

/// The arguments of `--name value` flags, typed by `schema`'s properties.
pub(super) fn typed(flags: &[String], schema: &Value) -> Result<Value, String> {
    let mut arguments = Map::new();
    let mut flags = flags.iter().peekable();
    while let Some(flag) = flags.next() {
        let Some(name) = flag.strip_prefix("--") else {
            return Err(format!("expected --param, found `{flag}`"));
        };
        let (name, inline) = match name.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (name, None),
        };
        let property = &schema["properties"][name];
        let is_boolean = type_of(property) == Some("boolean");
        let value = match inline {
            Some(value) => value,
            None if is_boolean && flags.peek().is_none_or(|next| next.starts_with("--")) => {
                "true".to_owned()
            }
            None => flags
                .next()
                .cloned()
                .ok_or_else(|| format!("--{name} has no value"))?,
        };
        let value = match type_of(property) {
            Some("string") => Value::String(value),
            _ => serde_json::from_str(&value).unwrap_or(Value::String(value)),
        };
        arguments.insert(name.to_owned(), value);
    }
    Ok(Value::Object(arguments))
}

/// A property's type (the first that is not `null`).
fn type_of(property: &Value) -> Option<&str> {
    match &property["type"] {
        Value::String(name) => Some(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .find(|n| *n != "null"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_are_typed_by_the_schema() {
        let schema = json!({"properties": {
            "city": {"type": "string"}, "days": {"type": "integer"},
            "verbose": {"type": "boolean"}, "tags": {"type": ["array", "null"]}
        }});
        let flags = words("--city '2 Rivers' --days 3 --verbose --tags '[\"a\",\"b\"]' --zip=0123")
            .unwrap();
        let typed = typed(&flags, &schema).unwrap();
        assert_eq!(
            typed,
            // `0123` is not JSON: it stays text.
            json!({"city": "2 Rivers", "days": 3, "verbose": true, "tags": ["a", "b"], "zip": "0123"})
        );
        // A number-like text stays text where the schema wants a string.
        let typed = super::typed(&words("--city 42").unwrap(), &schema).unwrap();
        assert_eq!(typed, json!({"city": "42"}));
    }

    #[test]
    fn mistakes_are_said() {
        let schema = json!({});
        assert_eq!(
            typed(&words("city x").unwrap(), &schema).unwrap_err(),
            "expected --param, found `city`"
        );
        assert_eq!(
            typed(&words("--days").unwrap(), &schema).unwrap_err(),
            "--days has no value"
        );
        assert_eq!(words("--a 'open").unwrap_err(), "a quote is not closed");
    }
}
