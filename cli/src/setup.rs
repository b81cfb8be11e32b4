//! Reading the config and choosing who a command acts as.

use anstream::{eprintln, println};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use crate::config::{BuildOptions, Built, Config};
use clap::Args;
use toolgate::Caller;

use crate::failure::Failure;
use crate::output;

/// Reads the config and builds its registry; tool files that could not be used are
/// reported on stderr (the others are served).
pub async fn load(path: &Path, options: BuildOptions) -> Result<(Config, Built), Failure> {
    let config = read(path)?;
    let servers: Vec<&str> = config
        .file
        .mcp
        .iter()
        .map(|server| server.name.as_str())
        .collect();
    if !options.skip_mcp && !servers.is_empty() && std::io::stderr().is_terminal() {
        // Connecting may take up to the deadline: say what is being waited for.
        eprintln!(
            "connecting to the MCP server{} {} (each gives up after its connect_timeout, 30 s by default)...",
            if servers.len() == 1 { "" } else { "s" },
            servers.join(", ")
        );
    }
    let built = config.build_with(options).await?;
    for problem in &built.file_problems {
        eprintln!("{} {problem}", output::warn("skipped tool file:"));
    }
    for import in &built.imports {
        if let Err(error) = &import.outcome {
            eprintln!(
                "{} `{}` ({}): {error}; its tools are missing, the rest is served (`toolgate mcp status` shows every server)",
                output::warn("MCP server not imported:"),
                import.name,
                import.address,
            );
        }
    }
    Ok((config, built))
}

/// Reads the config without building it.
pub fn read(path: &Path) -> Result<Config, Failure> {
    if !path.exists() {
        return Err(Failure::usage(format!(
            "no config at `{}`; write a toolgate.toml (see the README) or pass --config PATH",
            path.display()
        )));
    }
    Ok(Config::load(path)?)
}

/// Who a command acts as.
#[derive(Args, Clone, Default)]
pub struct Acting {
    /// Act as a caller of the config (`[callers.NAME]`).
    #[arg(long = "as", value_name = "CALLER")]
    pub caller: Option<String>,
    /// Act with this role (as the caller `cli`).
    #[arg(long, value_name = "ROLE", conflicts_with = "caller")]
    pub role: Option<String>,
}

impl Acting {
    /// The caller: `--as`, `--role`, or `cli` with `default_role`.
    pub fn caller(&self, built: &Built, default_role: &str) -> Result<Caller, Failure> {
        if let Some(name) = &self.caller {
            let names: Vec<&str> = built
                .callers
                .iter()
                .map(|(name, _)| name.as_str())
                .collect();
            return built
                .callers
                .get(name)
                .map(|entry| entry.caller.clone())
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "`{name}` is not a caller of the config; the callers are {}",
                        names.join(", ")
                    ))
                });
        }
        let role = self.role.as_deref().unwrap_or(default_role);
        if built.registry.roles().rank(role).is_none() {
            return Err(Failure::usage(format!(
                "\"{role}\" is not a role; the roles are {}",
                built.registry.roles().names().join(", ")
            )));
        }
        Ok(Caller::new("cli", role))
    }
}

/// The lowest role: what a conversation or an MCP client over stdio acts as by default.
pub fn lowest_role(built: &Built) -> String {
    built
        .registry
        .roles()
        .names()
        .first()
        .cloned()
        .unwrap_or_default()
}

/// The highest role: what the person running the command may see by default.
pub fn top_role(built: &Built) -> String {
    built
        .registry
        .roles()
        .names()
        .last()
        .cloned()
        .unwrap_or_default()
}

/// `toolgate mcp status`.
#[derive(Args)]
pub struct StatusArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn status(path: &Path, args: StatusArgs) -> Result<ExitCode, Failure> {
    let (config, built) = load(
        path,
        BuildOptions {
            skip_tool_files: true,
            ..BuildOptions::default()
        },
    )
    .await?;
    if config.file.mcp.is_empty() {
        println!(
            "no MCP servers are configured (add [[mcp]] entries to {})",
            config.path().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        let servers: Vec<serde_json::Value> = built
            .imports
            .iter()
            .map(|import| match &import.outcome {
                Ok(tools) => serde_json::json!({"name": import.name, "address": import.address, "connected": true, "tools": tools}),
                Err(error) => serde_json::json!({"name": import.name, "address": import.address, "connected": false, "tools": 0, "error": error}),
            })
            .collect();
        output::json(&serde_json::Value::Array(servers));
    } else {
        let rows: Vec<Vec<String>> = built
            .imports
            .iter()
            .map(|import| match &import.outcome {
                Ok(tools) => vec![
                    import.name.clone(),
                    output::good("connected"),
                    tools.to_string(),
                    import.address.clone(),
                    String::new(),
                ],
                Err(error) => vec![
                    import.name.clone(),
                    output::warn("not connected"),
                    "0".into(),
                    import.address.clone(),
                    error.clone(),
                ],
            })
            .collect();
        output::table(
            &["SERVER", "STATUS", "TOOLS", "ADDRESS", "LAST ERROR"],
            &rows,
        );
    }
    let all_connected = built.imports.iter().all(|import| import.outcome.is_ok());
    Ok(if all_connected {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// How long a command waits at its end for its spans and metrics to be sent.
const TELEMETRY_SEND_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Sends what `[telemetry]` still holds (a command ends before the batch would be sent), for
/// at most a few seconds: a collector that is down does not hold the command up.
pub async fn send_telemetry(built: &Built) {
    let Some(telemetry) = built.telemetry.clone() else {
        return;
    };
    // The exporters block: not on the runtime's own threads.
    let sending = tokio::task::spawn_blocking(move || telemetry.shutdown());
    if tokio::time::timeout(TELEMETRY_SEND_LIMIT, sending)
        .await
        .is_err()
    {
        eprintln!(
            "{} the telemetry collector did not take the spans within {} s; they are dropped",
            output::warn("telemetry:"),
            TELEMETRY_SEND_LIMIT.as_secs()
        );
    }
}
