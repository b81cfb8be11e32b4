//! What of a tool is searched, field by field.

use serde_json::Value;

use crate::definition::ToolDefinition;

/// The searched parts of a tool. Each has its own weight and length normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The tool's name, split into words.
    Name,
    /// Its display title.
    Title,
    /// Its description.
    Description,
    /// The names of its parameters (nested ones too).
    ParameterNames,
    /// What its input schema says of the parameters: descriptions and allowed values.
    ParameterText,
    /// Its group.
    Group,
    /// Its tags.
    Tags,
}

impl Field {
    /// Every field, in index order.
    pub const ALL: [Field; 7] = [
        Field::Name,
        Field::Title,
        Field::Description,
        Field::ParameterNames,
        Field::ParameterText,
        Field::Group,
        Field::Tags,
    ];

    /// The text of this field of `tool`.
    pub fn text(self, tool: &ToolDefinition) -> String {
        match self {
            Field::Name => tool.name.clone(),
            Field::Title => tool.title.clone().unwrap_or_default(),
            Field::Description => tool.description.clone(),
            Field::ParameterNames => schema_text(&tool.input_schema, Part::Names),
            Field::ParameterText => schema_text(&tool.input_schema, Part::Text),
            Field::Group => tool.group.clone().unwrap_or_default(),
            Field::Tags => tool.tags.join(" "),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Part {
    Names,
    Text,
}

/// Deeper than this, a schema is not read (a pathological schema costs nothing).
const MAX_DEPTH: usize = 12;

fn schema_text(schema: &Value, part: Part) -> String {
    let mut out = Vec::new();
    collect(schema, part, 0, &mut out);
    out.join(" ")
}

fn collect<'a>(value: &'a Value, part: Part, depth: usize, out: &mut Vec<&'a str>) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner, part) {
                    ("properties", Value::Object(properties), Part::Names) => {
                        out.extend(properties.keys().map(String::as_str));
                    }
                    ("description", Value::String(text), Part::Text) if depth > 0 => {
                        out.push(text);
                    }
                    ("enum" | "const", _, Part::Text) => strings(inner, out),
                    _ => {}
                }
                collect(inner, part, depth + 1, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                collect(item, part, depth + 1, out);
            }
        }
        _ => {}
    }
}

fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => out.extend(items.iter().filter_map(Value::as_str)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parameters_are_read_from_nested_schemas() {
        let mut tool = ToolDefinition::new("t", "d", "public", json!({}));
        tool.input_schema = json!({
            "type": "object",
            "description": "root text is the tool's, not a parameter's",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "when": {"$ref": "#/$defs/Day"},
                "stops": {"type": "array", "items": {"type": "object",
                    "properties": {"station": {"description": "Station code"}}}}
            },
            "$defs": {"Day": {"enum": ["monday", "tuesday"], "description": "A day"}}
        });
        let words = |field: Field| {
            let mut words: Vec<String> = field.text(&tool).split(' ').map(str::to_owned).collect();
            words.sort();
            words
        };
        assert_eq!(
            words(Field::ParameterNames),
            ["city", "station", "stops", "when"]
        );
        assert_eq!(
            words(Field::ParameterText),
            [
                "A", "City", "Station", "code", "day", "monday", "name", "tuesday"
            ]
        );
    }
}
