//! The keys of a tool file, read from Markdown with a YAML front matter or from TOML.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use toolgate::Risk;

use crate::duration::deserialize_optional as optional_duration;
use crate::problem::{Problem, line_of_key};

/// Everything a tool file says, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The tool's name, as in `#[tool(name = "...")]`.
    pub name: String,
    /// A human-friendly title.
    pub title: Option<String>,
    /// What the tool does; a Markdown file's body is added after it.
    pub description: Option<String>,
    /// The group the tool is listed in.
    pub group: Option<String>,
    /// The lowest role that may see and call it.
    pub permission: String,
    /// `low` (default), `medium`, `high` or `critical`.
    #[serde(default)]
    pub risk: Risk,
    /// The tool changes nothing.
    #[serde(default)]
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    #[serde(default)]
    pub destructive: bool,
    /// Calling twice with the same arguments has the effect of calling once.
    #[serde(default)]
    pub idempotent: bool,
    /// The tool reaches the world outside the application.
    #[serde(default)]
    pub open_world: bool,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Time limit of one call: seconds, or a text such as `"500ms"`, `"10s"`, `"2m"`.
    #[serde(default, deserialize_with = "optional_duration")]
    pub timeout: Option<Duration>,
    /// The arguments: a JSON Schema object, or the compact form
    /// `name: {type, description, required, default, enum}`.
    #[serde(default)]
    pub parameters: Option<Value>,
    /// JSON Schema of the result, when known.
    pub output_schema: Option<Value>,
    /// Arguments redacted in audit records and approval requests.
    #[serde(default)]
    pub secret: Vec<String>,
    /// The UI component that renders the result, as in `#[tool(ui = "...")]`.
    pub ui: Option<String>,
    /// Run a program.
    pub command: Option<CommandSpec>,
    /// Send an HTTP request.
    pub http: Option<HttpSpec>,
    /// Call other tools, step by step (see [`toolgate::workflow`]).
    pub workflow: Option<WorkflowSpec>,
}

/// `workflow`: the steps of a tool made of other tools.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowSpec {
    /// The steps, in order: `{id, tool, arguments, for_each, when, on_error}`.
    pub steps: Vec<toolgate::workflow::Step>,
}

/// `command`: a program, started with fixed arguments, that reads the call's arguments as
/// JSON on stdin and writes its result on stdout.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// A name looked up on `/usr/local/bin:/usr/bin:/bin`, or a path relative to the tool
    /// file's folder (`./scripts/weather.sh`).
    pub program: String,
    /// Fixed arguments (the call's arguments never become command-line arguments).
    #[serde(default)]
    pub args: Vec<String>,
    /// Working folder, relative to the sandbox (`.` by default).
    pub cwd: Option<String>,
    /// How stdout is read: `auto` (JSON when it parses, text otherwise), `json` or `text`.
    #[serde(default)]
    pub output: OutputKind,
    /// Extra environment variables; `${NAME}` takes a variable of toolgate's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// How a command's stdout becomes its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputKind {
    /// JSON when stdout parses as JSON, its text otherwise.
    #[default]
    Auto,
    /// JSON; anything else is an error.
    Json,
    /// The text as it is.
    Text,
}

/// `http`: one request built from the call's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    /// `GET` (default), `POST`, `PUT`, `PATCH` or `DELETE`.
    #[serde(default = "get")]
    pub method: String,
    /// The address; `{name}` is replaced by the argument `name`, percent-encoded as a path
    /// segment (RFC 3986: letters, digits, `-`, `.`, `_`, `~` stay as they are).
    #[serde(default)]
    pub url: String,
    /// A shared [source](HttpSource) (`[sources.NAME]` in toolgate.toml) whose base URL and
    /// headers the request uses; `path` is then added to its URL (instead of `url`).
    #[serde(default)]
    pub source: Option<String>,
    /// With `source`: the path after the source's URL, with `{name}` placeholders.
    #[serde(default)]
    pub path: Option<String>,
    /// Headers; `${NAME}` takes a variable of toolgate's environment (for secrets, which are
    /// never logged or shown). A source's headers come first; the tool's replace them.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Arguments sent in the query string also for `POST`, `PUT` and `PATCH` (whose other
    /// arguments are the JSON body).
    #[serde(default)]
    pub query: Vec<String>,
}

/// What several HTTP tools share: an API's base URL and its headers (authentication among
/// them), named by the tools' `source`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSource {
    /// The base URL, e.g. `https://api.example.com/v1`.
    pub url: String,
    /// Headers every request to it carries; `${NAME}` takes a variable of the environment.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The variable holding a bearer token: sent as `Authorization: Bearer <token>`.
    #[serde(default)]
    pub bearer_env: Option<String>,
}

impl HttpSource {
    /// Its headers, the bearer token's among them.
    pub fn all_headers(&self) -> BTreeMap<String, String> {
        let mut headers = BTreeMap::new();
        if let Some(variable) = &self.bearer_env {
            headers.insert(
                "Authorization".to_owned(),
                format!("Bearer ${{{variable}}}"),
            );
        }
        headers.extend(self.headers.clone());
        headers
    }
}

fn get() -> String {
    "GET".to_owned()
}

/// A parsed tool file: its keys, the Markdown body, and the text (for line numbers).
#[derive(Debug, Clone)]
pub struct ParsedFile {
    /// The keys.
    pub spec: ToolSpec,
    /// The Markdown body after the front matter (empty for TOML).
    pub body: String,
    /// The whole file.
    pub text: String,
}

impl ParsedFile {
    /// A problem with this file at the line of `key` (where the key is written).
    pub fn problem_at(&self, path: &Path, key: &str, message: impl Into<String>) -> Problem {
        Problem::new(path, line_of_key(&self.text, key), message)
    }
}

/// Reads a tool file by its extension: `.md` (YAML front matter) or `.toml`.
pub fn parse(path: &Path, text: &str) -> Result<ParsedFile, Problem> {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (spec, body) = match extension {
        "md" => parse_markdown(path, text)?,
        "toml" => (parse_toml(path, text)?, String::new()),
        _ => {
            return Err(Problem::new(
                path,
                None,
                "a tool file ends in `.md` (YAML front matter) or `.toml`",
            ));
        }
    };
    Ok(ParsedFile {
        spec,
        body,
        text: text.to_owned(),
    })
}

fn parse_markdown(path: &Path, text: &str) -> Result<(ToolSpec, String), Problem> {
    let no_front_matter = || {
        Problem::new(
            path,
            Some(1),
            "a Markdown tool file starts with a YAML front matter between `---` lines",
        )
    };
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(no_front_matter)?;
    let (front, body) = split_front_matter(rest).ok_or_else(|| {
        Problem::new(
            path,
            Some(1),
            "the front matter is not closed by a `---` line",
        )
    })?;
    let spec = serde_saphyr::from_str::<ToolSpec>(front).map_err(|error| {
        // The front matter starts on the file's second line.
        let line = error.location().map(|at| at.line() as usize + 1);
        Problem::new(path, line, yaml_message(&error))
    })?;
    Ok((spec, body.trim().to_owned()))
}

/// The front matter and the body, split at the first line that is exactly `---`.
fn split_front_matter(rest: &str) -> Option<(&str, &str)> {
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// The YAML error's message without the location it repeats (the problem carries the
/// line): `error: line 3 column 43: mapping values ...` becomes `mapping values ...`.
fn yaml_message(error: &serde_saphyr::Error) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let without_place = first
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
        .map_or(first, |(_, message)| message);
    match without_place.find(" at line ") {
        Some(at) => without_place[..at].to_owned(),
        None => without_place.to_owned(),
    }
}

fn parse_toml(path: &Path, text: &str) -> Result<ToolSpec, Problem> {
    toml::from_str::<ToolSpec>(text).map_err(|error| {
        let line = error
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        Problem::new(path, line, error.message().trim())
    })
}
