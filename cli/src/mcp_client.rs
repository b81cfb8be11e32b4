//! `toolgate mcp list TARGET` and `toolgate mcp call TARGET TOOL --param value`: any MCP
//! server, started as a command or reached at a URL, listed or called from the shell. Its
//! tools pass through a registry of their own, so arguments are typed and checked by the
//! server's schema before they are sent.

use anstream::{eprintln, println};
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;
use toolgate::mcp::McpImport;
use toolgate::{Caller, ErrorCode, Registry, ToolCall};

use crate::failure::Failure;
use crate::output;

/// The role everything is imported for: the person at the shell may use it all.
const ROLE: &str = "cli";

#[derive(Args)]
pub struct TargetArgs {
    /// The server: a URL (`http://127.0.0.1:8080/mcp`), or a command in one argument
    /// (`"npx -y @modelcontextprotocol/server-everything"`).
    target: String,
    /// For a URL: the variable holding a bearer token to send.
    #[arg(long, value_name = "VAR")]
    token_env: Option<String>,
}

#[derive(Args)]
pub struct ListArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// The tools' definitions as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(after_help = "Parameters are typed from the tool's schema, as in `toolgate call`.")]
pub struct CallArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// The tool, as the server names it.
    tool: String,
    /// All arguments as one JSON object instead of --param value pairs.
    #[arg(long, value_name = "JSON")]
    json: Option<String>,
    /// The tool's parameters: --name value ...
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PARAMS"
    )]
    params: Vec<String>,
}

pub async fn list(args: ListArgs) -> Result<ExitCode, Failure> {
    let registry = connect(&args.target).await?;
    let tools = registry.visible_to(&caller());
    if args.json {
        output::json(&serde_json::to_value(&*tools).unwrap_or(Value::Null));
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|tool| {
            vec![
                tool.name.clone(),
                crate::tools::first_line(&tool.description),
            ]
        })
        .collect();
    output::table(&["TOOL", "DESCRIPTION"], &rows);
    Ok(ExitCode::SUCCESS)
}

pub async fn call(args: CallArgs) -> Result<ExitCode, Failure> {
    let registry = connect(&args.target).await?;
    let Some(definition) = registry.definition(&caller(), &args.tool) else {
        return Err(Failure::not_found(format!(
            "the server has no tool `{}`; `toolgate mcp list {:?}` shows its tools",
            args.tool, args.target.target
        )));
    };
    let arguments = match &args.json {
        Some(text) => serde_json::from_str::<Value>(text)
            .map_err(|error| Failure::usage(format!("--json is not JSON: {error}")))?,
        None => crate::call::typed_arguments(&definition, &args.params)?,
    };
    let outcome = registry
        .call(&caller(), ToolCall::new("cli-1", &args.tool, arguments))
        .await;
    match &outcome.result {
        Ok(value) => {
            crate::call::print_value(&outcome, value);
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!(
                "{}",
                output::error_line(&format!("{}: {}", error.code.as_str(), error.message))
            );
            Ok(ExitCode::from(
                if error.code == ErrorCode::InvalidArguments {
                    2
                } else {
                    1
                },
            ))
        }
    }
}

fn caller() -> Caller {
    Caller::new("cli", ROLE)
}

/// Connects, and registers the server's tools under their own names.
async fn connect(target: &TargetArgs) -> Result<Registry, Failure> {
    let text = target.target.trim();
    let mut import = if text.starts_with("http://") || text.starts_with("https://") {
        McpImport::http("server", text)
    } else {
        let mut words = text.split_whitespace();
        let Some(program) = words.next() else {
            return Err(Failure::usage(
                "give the server: a URL, or the command that starts it",
            ));
        };
        McpImport::command(
            "server",
            program,
            words.map(str::to_owned).collect::<Vec<_>>(),
        )
    };
    if let Some(variable) = &target.token_env {
        let token = std::env::var(variable).map_err(|_| {
            Failure::usage(format!("--token-env {variable}: the variable is not set"))
        })?;
        import = import.bearer_token(token);
    }
    let connected = import
        .permission(ROLE)
        .prefix("")
        .connect()
        .await
        .map_err(|error| Failure::failed(format!("the MCP server did not answer: {error}")))?;
    let registry = Registry::builder()
        .roles([ROLE])
        .linked_tools(false)
        .build()
        .map_err(|error| Failure::failed(error.to_string()))?;
    for tool in connected.tools() {
        let name = toolgate::Tool::definition(&tool).name;
        if let Err(error) = registry.register(tool) {
            println!("{} `{name}`: {error}", output::warn("left out:"));
        }
    }
    Ok(registry)
}
