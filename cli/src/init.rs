//! `toolgate init`: a `toolgate.toml` that works as written (roles, a sandbox folder, an
//! audit file), and one starter tool, so `toolgate call greet --text hello` runs next.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::authoring::Kind;
use crate::failure::Failure;
use crate::starter;

/// The roles a new config names, lowest first.
const ROLES: [&str; 3] = ["public", "staff", "admin"];

const CONFIG: &str = r#"# toolgate's config. Every key is checked: a mistake is one error naming its line.
# `toolgate tools list` shows what it gives; the README lists every key.

roles = ["public", "staff", "admin"]   # lowest first; a role may use what the ones before it may
policy = "prompt"                      # risky calls wait for a person (auto | prompt | deny)
default_timeout = "30s"
audit_file = "audit.jsonl"             # every call, hash-chained: `toolgate audit verify`

[sandbox]
root = "workspace"                     # file tools and programs stay inside this folder

# Tool files live in .toolgate/tools/ beside this file: `toolgate tools new NAME` adds one.

# Who may call when serving (`toolgate serve http 127.0.0.1:8080`): each caller's token comes
# from an environment variable, never from this file.
# [callers.ann]
# role = "admin"
# token_env = "ANN_TOKEN"

# The model `toolgate chat` talks to: any OpenAI-compatible server.
# [model]
# url = "http://127.0.0.1:8080/v1"
# name = "default"
"#;

/// `toolgate init`: the config, its sandbox, and the starter tool `greet`.
pub fn run(config: &Path) -> Result<ExitCode, Failure> {
    if config.exists() {
        return Err(Failure::usage(format!(
            "`{}` exists already; edit it, or run `toolgate init` in an empty folder",
            config.display()
        )));
    }
    let written = write_config(config)?;
    let tools = folder_of(config).join(".toolgate").join("tools");
    let starter = starter::write(&tools, "greet", Kind::Command, ROLES[0])?;
    for path in written.iter().chain(&starter) {
        say_written(path, "");
    }
    println!(
        "\nnext:\n  toolgate tools list                 # what each role may use\n  \
         toolgate call greet --text hello    # run the starter tool\n  \
         toolgate tools new NAME             # add a tool (--kind http for a web API)\n  \
         toolgate serve http 127.0.0.1:8080  # serve them (add callers to toolgate.toml first)"
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes a new config at `path` and makes its sandbox folder: what was written.
pub fn write_config(path: &Path) -> Result<Vec<PathBuf>, Failure> {
    let folder = folder_of(path);
    let workspace = folder.join("workspace");
    std::fs::create_dir_all(&workspace).map_err(|error| {
        Failure::failed(format!(
            "`{}` cannot be created: {error}",
            workspace.display()
        ))
    })?;
    std::fs::write(path, CONFIG).map_err(|error| {
        Failure::failed(format!("`{}` cannot be written: {error}", path.display()))
    })?;
    Ok(vec![path.to_path_buf(), workspace])
}

/// Says what was written (`also` added after it).
pub fn say_written(path: &Path, also: &str) {
    let verb = if path.is_dir() { "made" } else { "wrote" };
    println!("{verb} {}{also}", path.display());
}

/// The folder a config file is in (`.` for a bare file name).
fn folder_of(config: &Path) -> PathBuf {
    match config.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
