//! One OpenAPI operation as a tool file, and the document's server and authentication as
//! the source the tools share.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::schema::resolved;
use super::{HttpSource, ImportedTool};

/// The source: the first server's URL (its variables at their defaults) and the headers
/// of the document's authentication, their secrets read from variables named after it.
pub(super) fn source(
    doc: &Value,
    name: &str,
    skipped: &mut Vec<String>,
) -> Result<HttpSource, String> {
    let server = &doc["servers"][0];
    let mut url = server["url"].as_str().unwrap_or_default().to_owned();
    if let Some(variables) = server["variables"].as_object() {
        for (variable, spec) in variables {
            let value = spec["default"].as_str().unwrap_or_default();
            url = url.replace(&format!("{{{variable}}}"), value);
        }
    }
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        skipped.push(format!(
            "the server URL {url:?} is not absolute: give the API's address"
        ));
        url.clear();
    }
    let mut source = HttpSource {
        url,
        ..HttpSource::default()
    };
    let prefix: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let used = doc["security"][0]
        .as_object()
        .and_then(|first| first.keys().next().cloned());
    let chosen = used.or_else(|| schemes.keys().next().cloned());
    if let Some(scheme) = chosen.and_then(|name| schemes.get(&name).map(|s| resolved(doc, s))) {
        authenticate(&mut source, &scheme, &prefix, skipped);
    }
    Ok(source)
}

fn authenticate(source: &mut HttpSource, scheme: &Value, prefix: &str, skipped: &mut Vec<String>) {
    let kind = scheme["type"].as_str().unwrap_or_default();
    let http_scheme = scheme["scheme"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match (kind, http_scheme.as_str(), scheme["in"].as_str()) {
        ("http", "bearer", _) | ("oauth2" | "openIdConnect", _, _) => {
            source.bearer_env = Some(format!("{prefix}_TOKEN"));
        }
        ("http", "basic", _) => {
            let header = format!("Basic ${{{prefix}_BASIC}}");
            source.headers.insert("Authorization".into(), header);
        }
        ("apiKey", _, Some("header")) => {
            let header = scheme["name"].as_str().unwrap_or("X-API-Key").to_owned();
            source
                .headers
                .insert(header, format!("${{{prefix}_API_KEY}}"));
        }
        _ => skipped.push(format!(
            "the authentication ({kind} {}) is not sent by a header: add it to the source by hand",
            scheme["in"].as_str().unwrap_or(&http_scheme)
        )),
    }
}

/// An operation where the document has it.
pub(super) struct Found<'a> {
    pub doc: &'a Value,
    pub path: &'a str,
    pub item: &'a Value,
    pub method: &'a str,
    pub op: &'a Value,
}

/// The tool's parameters as they are built: properties, required names, query names.
#[derive(Default)]
struct Parameters {
    properties: Map<String, Value>,
    required: Vec<String>,
    query: Vec<String>,
}

impl Found<'_> {
    /// The operation's tool file.
    pub(super) fn tool(&self, source: &str, permission: &str) -> Result<ImportedTool, String> {
        let name = self.name();
        let mut parameters = self.parameters()?;
        if !matches!(self.method, "get" | "delete") {
            self.body(&mut parameters)?;
        }
        let mut http =
            json!({"source": source, "method": self.method.to_uppercase(), "path": self.path});
        if !matches!(self.method, "get" | "delete") && !parameters.query.is_empty() {
            http["query"] = json!(parameters.query);
        }
        let schema = json!({"type": "object", "properties": parameters.properties, "required": parameters.required});
        let summary = self.op["summary"]
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let long = self.op["description"].as_str().unwrap_or_default().trim();
        let fallback = format!("{} {}", self.method.to_uppercase(), self.path);
        let description = summary.or(long.lines().next()).unwrap_or(&fallback);
        let mut front = vec![
            format!("name: {}", json!(name)),
            format!("description: {}", json!(description)),
            format!("permission: {}", json!(permission)),
        ];
        match self.method {
            "get" => front.push("read_only: true".into()),
            "delete" => front.push("destructive: true".into()),
            _ => {}
        }
        front.push(format!("parameters: {schema}"));
        front.push(format!("http: {http}"));
        let text = format!("---\n{}\n---\n{long}\n", front.join("\n"));
        Ok(ImportedTool { name, text })
    }

    /// `operationId` as a tool name, or the method and the path's words.
    fn name(&self) -> String {
        let raw = match self.op["operationId"].as_str() {
            Some(id) => id.to_owned(),
            None => format!("{}_{}", self.method, self.path.trim_matches('/')),
        };
        let cleaned: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let trimmed = cleaned.trim_matches('_');
        trimmed.chars().take(64).collect()
    }

    /// Path and query parameters (the operation's over the path's of the same name).
    fn parameters(&self) -> Result<Parameters, String> {
        let mut by_name: BTreeMap<(String, String), Value> = BTreeMap::new();
        let listed = [&self.item["parameters"], &self.op["parameters"]];
        for parameter in listed.into_iter().filter_map(Value::as_array).flatten() {
            let parameter = resolved(self.doc, parameter);
            let name = parameter["name"].as_str().unwrap_or_default().to_owned();
            let place = parameter["in"].as_str().unwrap_or_default().to_owned();
            by_name.insert((place, name), parameter);
        }
        let mut parameters = Parameters::default();
        for ((place, name), parameter) in by_name {
            if !matches!(place.as_str(), "path" | "query") {
                continue; // headers and cookies are the source's, not the model's
            }
            let mut schema = parameter
                .get("schema")
                .cloned()
                .unwrap_or_else(|| json!({}));
            if let (Some(text), Some(object)) =
                (parameter["description"].as_str(), schema.as_object_mut())
            {
                object.entry("description").or_insert_with(|| json!(text));
            }
            if place == "path" || parameter["required"] == json!(true) {
                parameters.required.push(name.clone());
            }
            if place == "query" {
                parameters.query.push(name.clone());
            }
            parameters.properties.insert(name, schema);
        }
        Ok(parameters)
    }

    /// The JSON body's properties as parameters of their own.
    fn body(&self, parameters: &mut Parameters) -> Result<(), String> {
        let body = resolved(self.doc, &self.op["requestBody"]);
        let Some(content) = body["content"].as_object() else {
            return Ok(());
        };
        let json_body = content
            .iter()
            .find(|(kind, _)| kind.as_str() == "application/json" || kind.ends_with("+json"));
        let Some((_, media)) = json_body else {
            let kinds: Vec<&String> = content.keys().collect();
            return Err(format!("its body is not JSON ({kinds:?})"));
        };
        let schema = &media["schema"];
        let Some(properties) = schema["properties"].as_object() else {
            return Err(
                "its body is not a JSON object with properties (a tool sends its arguments as one)"
                    .into(),
            );
        };
        let body_required = body["required"] == json!(true);
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (name, property) in properties {
            if parameters.properties.contains_key(name) {
                return Err(format!(
                    "its body's `{name}` has the name of a path or query parameter"
                ));
            }
            if body_required && required.contains(&name.as_str()) {
                parameters.required.push(name.clone());
            }
            parameters.properties.insert(name.clone(), property.clone());
        }
        Ok(())
    }
}
