//! `toolgate install <client>`: toolgate's entry (`toolgate serve mcp --stdio` with this
//! config) merged into an MCP client's config file, keeping everything already there;
//! `--print` only shows it.

use anstream::println;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};

use crate::failure::Failure;

#[derive(Clone, Copy, ValueEnum)]
pub enum Client {
    /// Claude Desktop (its `claude_desktop_config.json`).
    ClaudeDesktop,
    /// Claude Code (the project's `.mcp.json`; `--user`: `~/.claude.json`).
    ClaudeCode,
    /// Cursor (the project's `.cursor/mcp.json`; `--user`: `~/.cursor/mcp.json`).
    Cursor,
    /// VS Code (the project's `.vscode/mcp.json`).
    Vscode,
}

#[derive(Args)]
pub struct InstallArgs {
    /// The client.
    #[arg(value_enum)]
    client: Client,
    /// The server's name in the client.
    #[arg(long, default_value = "toolgate")]
    name: String,
    /// Serve as this caller of the config (default: the lowest role).
    #[arg(long = "as", value_name = "CALLER")]
    caller: Option<String>,
    /// The user's own config instead of the project's (Claude Code, Cursor).
    #[arg(long)]
    user: bool,
    /// The client's config file, if not where the client keeps it.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Only print the entry and where it would go.
    #[arg(long)]
    print: bool,
}

pub fn run(config: &Path, args: InstallArgs) -> Result<ExitCode, Failure> {
    crate::setup::read(config)?;
    let config = std::path::absolute(config)
        .map_err(|error| Failure::failed(format!("`{}`: {error}", config.display())))?;
    let file = match &args.file {
        Some(file) => file.clone(),
        None => where_kept(args.client, args.user)?,
    };
    let entry = entry(args.client, &config, args.caller.as_deref())?;
    let key = servers_key(args.client);
    if args.print {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ key: { &args.name: entry } }))
                .unwrap_or_default()
        );
        println!("(goes under `{key}` in {})", file.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut document = read(&file)?;
    let servers = document
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(Failure::failed(format!(
            "{}: `{key}` is not an object; fix it, or add the entry by hand (`--print`)",
            file.display()
        )));
    };
    let replaced = servers.insert(args.name.clone(), entry).is_some();
    write(&file, &Value::Object(document))?;
    let verb = if replaced { "replaced" } else { "added" };
    println!(
        "{verb} `{}` in {} (restart the client to load it)",
        args.name,
        file.display()
    );
    println!(
        "variables the config reads (approval key, tokens) must be set where the client starts, or added under `env` in that file"
    );
    Ok(ExitCode::SUCCESS)
}

/// Where the client keeps its config.
fn where_kept(client: Client, user: bool) -> Result<PathBuf, Failure> {
    let home = || {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| Failure::usage("HOME is not set: give the file with --file"))
    };
    Ok(match (client, user) {
        (Client::ClaudeDesktop, _) => desktop_config()?
            .join("Claude")
            .join("claude_desktop_config.json"),
        (Client::ClaudeCode, false) => PathBuf::from(".mcp.json"),
        (Client::ClaudeCode, true) => home()?.join(".claude.json"),
        (Client::Cursor, false) => PathBuf::from(".cursor").join("mcp.json"),
        (Client::Cursor, true) => home()?.join(".cursor").join("mcp.json"),
        (Client::Vscode, false) => PathBuf::from(".vscode").join("mcp.json"),
        (Client::Vscode, true) => {
            return Err(Failure::usage(
                "VS Code's user MCP servers are kept in its profile: use --file, or the project's .vscode/mcp.json (without --user)",
            ));
        }
    })
}

/// The folder of applications' configs: `~/Library/Application Support` on macOS,
/// `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` (or `~/.config`) elsewhere.
fn desktop_config() -> Result<PathBuf, Failure> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let found = if cfg!(target_os = "macos") {
        var("HOME").map(|home| home.join("Library").join("Application Support"))
    } else if cfg!(windows) {
        var("APPDATA")
    } else {
        var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|home| home.join(".config")))
    };
    found.ok_or_else(|| Failure::usage("no home folder is known: give the file with --file"))
}

/// The key the client lists its servers under.
fn servers_key(client: Client) -> &'static str {
    match client {
        Client::Vscode => "servers",
        _ => "mcpServers",
    }
}

/// toolgate's entry: this executable serving this config over stdio.
fn entry(client: Client, config: &Path, caller: Option<&str>) -> Result<Value, Failure> {
    let program = std::env::current_exe()
        .map_err(|error| Failure::failed(format!("where toolgate is cannot be told: {error}")))?;
    let mut arguments = vec!["--config".to_owned(), config.display().to_string()];
    arguments.extend(["serve", "mcp", "--stdio"].map(str::to_owned));
    if let Some(caller) = caller {
        arguments.extend(["--as".to_owned(), caller.to_owned()]);
    }
    let mut entry = json!({"command": program.display().to_string(), "args": arguments});
    if matches!(client, Client::Vscode | Client::ClaudeCode) {
        entry["type"] = json!("stdio");
    }
    Ok(entry)
}

/// The client's config as an object (an empty one if there is no file yet).
fn read(file: &Path) -> Result<Map<String, Value>, Failure> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(error) => {
            return Err(Failure::failed(format!(
                "`{}` cannot be read: {error}",
                file.display()
            )));
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(Failure::failed(format!(
            "{}: not a JSON object; left as it is (add the entry by hand: `--print`)",
            file.display()
        ))),
        Err(error) => Err(Failure::failed(format!(
            "{}:{}: not JSON ({error}); left as it is: fix it, or add the entry by hand (`--print`)",
            file.display(),
            error.line()
        ))),
    }
}

/// Writes the config whole (a file beside it, then renamed: a client reading it never sees
/// half of it).
fn write(file: &Path, document: &Value) -> Result<(), Failure> {
    let failed = |error: std::io::Error| {
        Failure::failed(format!("`{}` cannot be written: {error}", file.display()))
    };
    if let Some(folder) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(failed)?;
    }
    let text = serde_json::to_string_pretty(document).unwrap_or_default() + "\n";
    let partial = file.with_extension("toolgate-partial");
    std::fs::write(&partial, text).map_err(failed)?;
    std::fs::rename(&partial, file).map_err(failed)
}
