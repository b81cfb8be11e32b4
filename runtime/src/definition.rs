//! What a tool is, as shown to a model and used by the runtime.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How much harm a call could do; policies use it to ask for approval.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Harmless (the default).
    #[default]
    Low,
    /// Changes something that is easy to undo.
    Medium,
    /// Changes something that is hard to undo.
    High,
    /// Could cause lasting damage; should always be approved by a person.
    Critical,
}

impl Risk {
    /// The risk as written in `#[tool(risk = "...")]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
            Risk::Critical => "critical",
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Behaviour hints, as in MCP's tool annotations. They are claims by the tool's author.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Hints {
    /// The tool changes nothing. Read-only calls of a batch run in parallel.
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    pub destructive: bool,
    /// Calling it twice with the same arguments has the effect of calling it once.
    pub idempotent: bool,
    /// The tool reaches the world outside the application (web, e-mail, ...).
    pub open_world: bool,
}

/// Where a tool was defined, for error messages.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SourceLocation {
    /// Source file, as `file!()` gives it.
    pub file: String,
    /// Line of the function.
    pub line: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Everything known about a tool: what a model is shown and what the runtime enforces.
///
/// The `input_schema` is JSON Schema 2020-12 with an object root; it is exactly what calls
/// are validated against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Unique name, matching `^[a-zA-Z0-9_.\-/]{1,64}$` (see [`is_valid_tool_name`]).
    pub name: String,
    /// Human-friendly title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// Group for listing (e.g. `"files"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Free-form tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The lowest role that may see and call the tool.
    pub permission: String,
    /// How risky a call is.
    pub risk: Risk,
    /// Behaviour hints.
    pub hints: Hints,
    /// JSON Schema of the arguments (object root).
    pub input_schema: Value,
    /// JSON Schema of the result, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The UI component that renders the result (`#[tool(ui = "pet_card")]`): travels with
    /// outcomes and events, so a front end such as the approval console can show the result
    /// with a component the application registers. A name as [`is_valid_ui_name`] allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<String>,
    /// The result is a list of [`Content`](crate::content::Content) blocks (images, audio,
    /// resources, text) rather than a JSON value: set by `#[tool]` for a function returning
    /// `Content` or `Vec<Content>`, and by the MCP importer for a remote tool without an
    /// output schema.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub returns_content: bool,
    /// Time limit of one call; `None` uses the registry's default.
    #[serde(skip)]
    pub timeout: Option<Duration>,
    /// Where the tool was defined, when known.
    #[serde(skip)]
    pub source: Option<SourceLocation>,
    /// Top-level arguments redacted in audit records (`#[secret]` parameters).
    #[serde(skip)]
    pub secret_arguments: Vec<String>,
    /// Its results carry text from outside, which may try to instruct the model (a file,
    /// a web page, another server's answer): the agent loop sends them inside an envelope
    /// the model is told to read as data (see [`agent`](crate::agent)). Set for imported MCP
    /// tools, tool files and the ready file, web and program tools; an
    /// [`open_world`](Hints::open_world) tool's results are untrusted whatever this says.
    #[serde(skip)]
    pub untrusted_results: bool,
}

impl ToolDefinition {
    /// A definition with the given name, description, permission and input schema; the other
    /// fields take their defaults and can be set directly.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolgate::ToolDefinition;
    ///
    /// let mut definition = ToolDefinition::new(
    ///     "echo",
    ///     "Repeat the text back.",
    ///     "public",
    ///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    /// );
    /// definition.hints.read_only = true;
    /// assert_eq!(definition.name, "echo");
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        permission: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            title: None,
            description: description.into(),
            group: None,
            tags: Vec::new(),
            permission: permission.into(),
            risk: Risk::Low,
            hints: Hints::default(),
            input_schema,
            output_schema: None,
            ui: None,
            returns_content: false,
            timeout: None,
            source: None,
            secret_arguments: Vec::new(),
            untrusted_results: false,
        }
    }

    /// Whether the tool's results are sent to a model as data from outside
    /// ([`untrusted_results`](Self::untrusted_results), or an open-world tool).
    pub fn results_untrusted(&self) -> bool {
        self.untrusted_results || self.hints.open_world
    }
}

/// Whether `name` is a valid tool name: `^[a-zA-Z0-9_.\-/]{1,64}$`, MCP's format (SEP-986:
/// letters, digits, `_`, `-`, `.` and `/`, e.g. `admin.tools.list` or `files/read`).
///
/// OpenAI and Anthropic take only letters, digits, `_` and `-` (Gemini no `/`): their
/// exports carry [`provider_tool_name`] instead, and the registry finds a tool by either.
///
/// ```
/// assert!(toolgate::is_valid_tool_name("get_clinic_hours"));
/// assert!(toolgate::is_valid_tool_name("files/read.text"));
/// assert!(!toolgate::is_valid_tool_name("get clinic hours"));
/// ```
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
}

/// A tool's name as providers that take only `^[a-zA-Z0-9_-]{1,64}$` see it: `.` and `/`
/// become `_` (`files/read.text` → `files_read_text`). Names without them are unchanged.
/// Two tools may not share a provider name (the registry refuses to build).
///
/// ```
/// assert_eq!(toolgate::provider_tool_name("files/read.text"), "files_read_text");
/// assert_eq!(toolgate::provider_tool_name("get_weather"), "get_weather");
/// ```
pub fn provider_tool_name(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains(['.', '/']) {
        std::borrow::Cow::Owned(name.replace(['.', '/'], "_"))
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// Whether `name` may name a UI component (`#[tool(ui = "...")]`): 1 to 64 ASCII letters,
/// digits, `_` and `-`, starting with a letter, so a front end can use it as a key as is.
///
/// ```
/// assert!(toolgate::is_valid_ui_name("pet_card"));
/// assert!(!toolgate::is_valid_ui_name("pet card"));
/// assert!(!toolgate::is_valid_ui_name("_card"));
/// ```
pub fn is_valid_ui_name(name: &str) -> bool {
    name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
