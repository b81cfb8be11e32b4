//! Tools defined in files, for people who do not write Rust: a Markdown file with a YAML
//! front matter (its body is the description the model reads) or a TOML file, which runs a
//! program ([`command`](spec::CommandSpec)) or sends an HTTP request ([`http`](spec::HttpSpec)).
//!
//! ```markdown
//! ---
//! name: weather
//! description: Today's weather for a city.
//! permission: public
//! read_only: true
//! parameters:
//!   city: {type: string, description: The city's name.}
//! http:
//!   url: https://api.example.com/weather/{city}
//!   headers: {Authorization: "Bearer ${WEATHER_TOKEN}"}
//! ---
//! Answers with the temperature in °C and a one-line summary.
//! ```
//!
//! Every file tool is checked like a `#[tool]` when it is registered (its name, its schema
//! compiles, its permission names a role, provider compatibility where the registry requires
//! it); a broken file is one [`Problem`] (file, line, what is wrong) and the others still
//! load. [`FileTools::watch`] keeps a registry current while files change.

mod command;
mod environment;
mod http;
mod load;
pub mod openapi;
mod parameters;
pub mod spec;
mod watch;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::files::Sandbox;
use crate::programs::CommandConfig;
use crate::web::WebConfig;

pub use crate::problem::Problem;
pub use environment::interpolate as interpolate_env;
pub use environment::names as variable_names;
pub use load::{FileTool, Registered, load_file, register_file_tool, tool_files};
pub use spec::HttpSource;
pub use watch::Watching;

/// Where tool files are found and what they run with.
#[derive(Clone)]
pub struct FileTools {
    /// Folders searched for `*.md` and `*.toml` tool files, in order: a name claimed by an
    /// earlier folder (or by a tool already in the registry) is refused in a later one.
    pub folders: Vec<PathBuf>,
    /// The sandbox command tools run in (their working folder and all they may write);
    /// without one, command tools are refused.
    pub sandbox: Option<Arc<Sandbox>>,
    /// Time limit and output cap of command tools, and whether they are confined (its
    /// program allowlist is not used: a command tool's program is fixed by its file).
    pub commands: CommandConfig,
    /// Which addresses HTTP tools may reach, their time limit and body cap.
    pub web: Arc<WebConfig>,
    /// The shared HTTP sources tools name (`source: shop`), by name.
    pub sources: BTreeMap<String, HttpSource>,
}

impl FileTools {
    /// Tool files from `folders`, with no sandbox and the default limits.
    pub fn new(folders: Vec<PathBuf>) -> Self {
        FileTools {
            folders,
            sandbox: None,
            commands: CommandConfig::new(),
            web: Arc::new(WebConfig::default()),
            sources: BTreeMap::new(),
        }
    }

    /// The project's folder (`PROJECT/.toolgate/tools`).
    pub fn project_folder(project: &std::path::Path) -> PathBuf {
        project.join(".toolgate").join("tools")
    }

    /// The user's folder: `$XDG_CONFIG_HOME/toolgate/tools`, or `~/.config/toolgate/tools`.
    pub fn user_folder() -> Option<PathBuf> {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
        Some(config.join("toolgate").join("tools"))
    }
}
