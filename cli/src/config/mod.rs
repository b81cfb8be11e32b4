//! `toolgate.toml`: one file that says which roles exist, who calls with which token, the
//! policy and limits, where state and the audit trail are kept, which ready tools and MCP
//! servers are offered with which permission, and where tool files are. Unknown keys and
//! bad values are errors with the line they are on.
//!
//! ```toml
//! roles = ["public", "staff", "admin"]
//! policy = "prompt"
//! audit_file = "audit.jsonl"
//!
//! [callers.alice]
//! role = "admin"
//! token_env = "ALICE_TOKEN"
//!
//! [auth]                       # and people or services with the provider's tokens
//! issuer = "https://login.example.com/realms/tools"
//! audience = "https://tools.example.com/mcp"
//! roles = [{claim = "groups", value = "tool-admins", role = "admin"}]
//!
//! [sandbox]
//! root = "workspace"
//!
//! [ready.files]
//! permission = "staff"
//!
//! [telemetry]                  # spans and metrics over OTLP (else the OTEL_* variables)
//! endpoint = "http://127.0.0.1:4318"
//! ```
//!
//! `Config::load` reads and checks the file; `Config::build_with` makes the registry it
//! describes, with the ready tools, the tool files (`toolgate_tools::file_tools`) and the
//! imported MCP servers.

mod auth;
mod budgets;
mod build;
mod callers;
mod devices;
mod governance;
mod imports;
pub mod keys;
mod model;
mod rates;
mod ready;
mod rules;
mod telemetry;

use std::ops::Range;
use std::path::{Path, PathBuf};

pub use build::{BuildOptions, Built};
pub use callers::Gate;

use keys::ConfigFile;
use toolgate_tools::Problem;

/// A read `toolgate.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// Its keys.
    pub file: ConfigFile,
    path: PathBuf,
    text: String,
}

impl Config {
    /// Reads and checks the keys of a config file.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, Problem> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|error| Problem::new(path, None, format!("cannot be read: {error}")))?;
        Config::parse(path, &text)
    }

    /// Reads config text; `path` names it in problems and anchors relative paths.
    pub fn parse(path: &Path, text: &str) -> Result<Config, Problem> {
        let file = toml::from_str::<ConfigFile>(text).map_err(|error| {
            let line = error.span().map(|span| line_at(text, span.start));
            Problem::new(path, line, error.message().trim())
        })?;
        Ok(Config {
            file,
            path: path.to_owned(),
            text: text.to_owned(),
        })
    }

    /// Whether state is kept in a database (`state` set and not `memory`), so that other
    /// processes share it.
    pub fn shares_state(&self) -> bool {
        self.file
            .state
            .as_ref()
            .is_some_and(|state| state.get_ref() != "memory")
    }

    /// The config file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder relative paths are taken from.
    pub fn folder(&self) -> PathBuf {
        let folder = self.path.parent().unwrap_or(Path::new("."));
        if folder.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            folder.to_owned()
        }
    }

    /// `path` relative to the config file's folder (absolute paths stay as they are).
    pub fn resolve(&self, path: &Path) -> PathBuf {
        self.folder().join(path)
    }

    /// The tool folders: those configured, or `.toolgate/tools` beside the file; then the
    /// user's folder unless `user_tools = false`.
    pub fn tool_folders(&self) -> Vec<PathBuf> {
        let mut folders: Vec<PathBuf> = match &self.file.tool_folders {
            Some(folders) => folders.iter().map(|folder| self.resolve(folder)).collect(),
            None => vec![toolgate_tools::file_tools::FileTools::project_folder(
                &self.folder(),
            )],
        };
        if self.file.user_tools
            && let Some(user) = toolgate_tools::file_tools::FileTools::user_folder()
        {
            folders.push(user);
        }
        folders
    }

    /// A problem at the place a value was written.
    pub(crate) fn problem_at(&self, span: Range<usize>, message: impl Into<String>) -> Problem {
        Problem::new(&self.path, Some(line_at(&self.text, span.start)), message)
    }

    /// A problem with the file as a whole.
    pub(crate) fn problem(&self, message: impl Into<String>) -> Problem {
        Problem::new(&self.path, None, message)
    }
}

/// The 1-based line of a byte offset.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
