//! The small language of workflow arguments: `${params.topic}`, `${steps.search.results[*].title}`,
//! `${item.title}`. A path starts at `params` (the workflow's arguments), `steps.ID` (a step's
//! result; a `for_each` step's is the list of its results) or `item` (the element a
//! `for_each` step is at), then goes on by `.key`, `[n]` or `[*]` (every element, the rest of
//! the path applied to each). A string that is one `${...}` becomes the value; in a longer
//! string each `${...}` is written as text.

use serde_json::{Map, Value};

/// A path, parsed: its root and its parts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Path {
    pub(crate) root: Root,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Root {
    Params,
    Step(String),
    Item,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Key(String),
    Index(usize),
    Every,
}

impl Path {
    /// The first key after the root (`topic` of `params.topic`).
    pub(crate) fn first_key(&self) -> Option<&str> {
        match self.parts.first() {
            Some(Part::Key(key)) => Some(key),
            _ => None,
        }
    }
}

/// Parses `params.a[0].b`, `steps.search.results[*]`, `item`.
pub(crate) fn parse(text: &str) -> Result<Path, String> {
    let mut rest = text.trim();
    let word = |rest: &mut &str| -> String {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let (word, tail) = rest.split_at(end);
        *rest = tail;
        word.to_owned()
    };
    let root = match word(&mut rest).as_str() {
        "params" => Root::Params,
        "item" => Root::Item,
        "steps" => {
            rest = rest
                .strip_prefix('.')
                .ok_or_else(|| format!("`{text}`: `steps` is followed by a step's id"))?;
            Root::Step(word(&mut rest))
        }
        other => {
            return Err(format!(
                "`{text}`: a path starts with `params`, `steps.ID` or `item`, not `{other}`"
            ));
        }
    };
    let mut parts = Vec::new();
    while !rest.is_empty() {
        if let Some(tail) = rest.strip_prefix('.') {
            rest = tail;
            let key = word(&mut rest);
            if key.is_empty() {
                return Err(format!("`{text}`: a `.` is followed by a name"));
            }
            parts.push(Part::Key(key));
        } else if let Some(tail) = rest.strip_prefix('[') {
            let close = tail
                .find(']')
                .ok_or_else(|| format!("`{text}`: a `[` is not closed"))?;
            let inside = &tail[..close];
            parts.push(match inside {
                "*" => Part::Every,
                n => Part::Index(
                    n.parse()
                        .map_err(|_| format!("`{text}`: `[{n}]` is not an index or `*`"))?,
                ),
            });
            rest = &tail[close + 1..];
        } else {
            return Err(format!("`{text}`: unexpected `{rest}`"));
        }
    }
    Ok(Path { root, parts })
}

/// What a path reaches from `start` (null where it reaches nothing).
fn follow(start: &Value, parts: &[Part]) -> Value {
    let Some((first, rest)) = parts.split_first() else {
        return start.clone();
    };
    match first {
        Part::Key(key) => follow(start.get(key).unwrap_or(&Value::Null), rest),
        Part::Index(n) => follow(start.get(*n).unwrap_or(&Value::Null), rest),
        Part::Every => match start {
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| follow(item, rest)).collect())
            }
            _ => Value::Null,
        },
    }
}

/// What the paths are read against.
pub(crate) struct Scope<'a> {
    pub(crate) params: &'a Value,
    pub(crate) steps: &'a Map<String, Value>,
    pub(crate) item: Option<&'a Value>,
}

impl Scope<'_> {
    pub(crate) fn value_of(&self, path: &Path) -> Value {
        let start = match &path.root {
            Root::Params => self.params,
            Root::Step(id) => self.steps.get(id).unwrap_or(&Value::Null),
            Root::Item => self.item.unwrap_or(&Value::Null),
        };
        follow(start, &path.parts)
    }

    /// `template` with every `${...}` put in.
    pub(crate) fn render(&self, template: &Value) -> Result<Value, String> {
        Ok(match template {
            Value::String(text) => self.render_text(text)?,
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|i| self.render(i))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.render(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => other.clone(),
        })
    }

    fn render_text(&self, text: &str) -> Result<Value, String> {
        let pieces = pieces(text)?;
        if let [Piece::Path(path)] = pieces.as_slice() {
            return Ok(self.value_of(path));
        }
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Text(text) => out.push_str(&text),
                Piece::Path(path) => match self.value_of(&path) {
                    Value::String(text) => out.push_str(&text),
                    Value::Null => {}
                    other => out.push_str(&other.to_string()),
                },
            }
        }
        Ok(Value::String(out))
    }
}

/// A string's text and `${...}` paths.
#[derive(Debug, PartialEq)]
pub(crate) enum Piece {
    Text(String),
    Path(Path),
}

pub(crate) fn pieces(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        if start > 0 {
            pieces.push(Piece::Text(rest[..start].to_owned()));
        }
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{text}`: a `${{` is not closed"))?;
        pieces.push(Piece::Path(parse(&after[..end])?));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_owned()));
    }
    Ok(pieces)
}

/// Every path a template holds.
pub(crate) fn paths_in(template: &Value, found: &mut Vec<Path>) -> Result<(), String> {
    match template {
        Value::String(text) => {
            for piece in pieces(text)? {
                if let Piece::Path(path) = piece {
                    found.push(path);
                }
            }
        }
        Value::Array(items) => items.iter().try_for_each(|item| paths_in(item, found))?,
        Value::Object(object) => object
            .values()
            .try_for_each(|value| paths_in(value, found))?,
        _ => {}
    }
    Ok(())
}

/// Whether a condition holds: its value is not null, false, 0, "" or empty; `!` before it
/// turns that round.
pub(crate) fn holds(scope: &Scope<'_>, condition: &str) -> Result<bool, String> {
    let (negated, text) = match condition.trim().strip_prefix('!') {
        Some(rest) => (true, rest.trim()),
        None => (false, condition.trim()),
    };
    let value = scope.render(&Value::String(text.to_owned()))?;
    let truthy = match &value {
        Value::Null | Value::Bool(false) => false,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Bool(true) => true,
    };
    Ok(truthy != negated)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_reach_params_steps_and_items() {
        let params = json!({"topic": "AI", "n": 2});
        let steps = json!({"search": {"results": [{"title": "a"}, {"title": "b"}]}});
        let item = json!({"title": "b"});
        let scope = Scope {
            params: &params,
            steps: steps.as_object().unwrap(),
            item: Some(&item),
        };
        let rendered = scope
            .render(&json!({
                "q": "${params.topic}", "n": "${params.n}",
                "titles": "${steps.search.results[*].title}", "first": "${steps.search.results[0].title}",
                "text": "news on ${params.topic}: ${item.title} (${params.n})", "missing": "${params.none}"
            }))
            .unwrap();
        assert_eq!(
            rendered,
            json!({"q": "AI", "n": 2, "titles": ["a", "b"], "first": "a", "text": "news on AI: b (2)", "missing": null})
        );
        assert!(holds(&scope, "${steps.search.results}").unwrap());
        assert!(holds(&scope, "!${params.none}").unwrap());
    }

    #[test]
    fn mistakes_are_said() {
        assert!(
            parse("stepz.x")
                .unwrap_err()
                .contains("starts with `params`")
        );
        assert!(
            parse("steps")
                .unwrap_err()
                .contains("followed by a step's id")
        );
        assert!(parse("params.a[x]").unwrap_err().contains("not an index"));
        assert!(pieces("${params.a").unwrap_err().contains("not closed"));
    }
}
