//! `toolgate`: list, call, approve and serve the tools a `toolgate.toml` defines, and check
//! tool files and audit logs. Errors are one line on stderr; the exit code says how it ended.

mod approvals;
mod approve;
mod audit;
mod authoring;
mod call;
mod chat;
mod config;
mod devices;
mod failure;
mod import;
mod init;
mod install;
mod mcp_client;
mod output;
mod rules;
mod serve;
mod serve_summary;
mod setup;
mod starter;
mod stats;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use failure::Failure;

/// Tools a language model can call, safely: list them by role, call them, approve risky
/// calls, serve them over MCP or HTTP, and check the audit trail.
#[derive(Parser)]
#[command(name = "toolgate", version, after_help = EXIT_CODES)]
struct Cli {
    /// The config file.
    #[arg(
        long,
        global = true,
        env = "TOOLGATE_CONFIG",
        default_value = "toolgate.toml"
    )]
    config: PathBuf,
    #[command(subcommand)]
    command: Command,
}

const EXIT_CODES: &str = "Exit codes: 0 done; 1 the tool (or check) failed; 2 bad usage or config; \
3 the call needs approval and was not approved; 4 no such tool for this role.";

#[derive(Subcommand)]
enum Command {
    /// Start here: write a working toolgate.toml, its sandbox folder and a starter tool.
    Init,
    /// List, inspect, create and check tools.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Call a tool: `toolgate call NAME --param value ...` or `--json '{...}'`.
    Call(call::CallArgs),
    /// Serve the tools over MCP or HTTP, each caller seeing what its role allows.
    #[command(subcommand)]
    Serve(serve::ServeCommand),
    /// MCP servers: the imported ones' status, or any server listed and called.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Calls waiting for approval (kept in the configured `state`).
    #[command(subcommand)]
    Approvals(approvals::ApprovalsCommand),
    /// Check and read the audit trail.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Find tools by what they do.
    Search(tools::SearchArgs),
    /// Talk with the config's `[model]`, which calls the tools your role allows.
    Chat(chat::ChatArgs),
    /// Add toolgate to an MCP client (Claude Desktop, Claude Code, Cursor, VS Code).
    Install(install::InstallArgs),
    /// What the tools were used for: calls, errors, durations, approvals, unused tools.
    Stats(stats::StatsArgs),
    /// Offer this machine's tools to a hub over one outbound link (works behind a home
    /// router): `toolgate device --hub https://hub.example.com --token-env DEVICE_TOKEN`.
    Device(devices::DeviceArgs),
    /// A hub's devices: list them, revoke one, make a token.
    Devices(devices::DevicesArgs),
}

#[derive(Subcommand)]
enum McpCommand {
    /// Each imported server: connected or not, how many tools, the last error.
    Status(setup::StatusArgs),
    /// The tools of any MCP server (a URL, or the command that starts it).
    List(mcp_client::ListArgs),
    /// Call a tool of any MCP server: `toolgate mcp call TARGET TOOL --param value`.
    Call(mcp_client::CallArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            return failure::report(&Failure::usage(format!("no async runtime: {error}")));
        }
    };
    let result = runtime.block_on(run(cli));
    let code = match result {
        Ok(code) => code,
        Err(failure) => return failure::report(&failure),
    };
    // MCP children and watchers end with the process; do not wait for blocking readers.
    runtime.shutdown_background();
    code
}

async fn run(cli: Cli) -> Result<ExitCode, Failure> {
    let config = cli.config;
    match cli.command {
        Command::Init => init::run(&config),
        Command::Tools(command) => tools::run(&config, command).await,
        Command::Call(args) => call::run(&config, args).await,
        Command::Serve(command) => serve::run(&config, command).await,
        Command::Mcp(McpCommand::Status(args)) => setup::status(&config, args).await,
        Command::Mcp(McpCommand::List(args)) => mcp_client::list(args).await,
        Command::Mcp(McpCommand::Call(args)) => mcp_client::call(args).await,
        Command::Approvals(command) => approvals::run(&config, command).await,
        Command::Audit(command) => audit::run(&config, command).await,
        Command::Search(args) => tools::search(&config, args).await,
        Command::Chat(args) => chat::run(&config, args).await,
        Command::Install(args) => install::run(&config, args),
        Command::Stats(args) => stats::run(&config, args).await,
        Command::Device(args) => devices::link(&config, args).await,
        Command::Devices(args) => devices::run(args).await,
    }
}
