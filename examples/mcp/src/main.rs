//! An MCP server: a few tools of its own and the ready tools of `toolgate-tools`, over stdio
//! or Streamable HTTP.
//!
//! ```sh
//! cargo run -p toolgate-example-mcp -- --stdio --role user [--page-size 100]
//! cargo run -p toolgate-example-mcp -- --http 127.0.0.1:8080 [--allowed-host tools.example.com]
//! cargo run -p toolgate-example-mcp -- --help
//! ```
//!
//! Over HTTP, `Authorization: Bearer user-token` or `admin-token` picks the role; without a
//! token the caller is `public`, and an unknown token gets `401`. The sandbox folder is
//! `--sandbox` (or `MCP_SANDBOX`, default `./workspace`), the task database `--tasks-db` (or
//! `MCP_TASKS_DB`, default `tasks.db`); both are created on first use, after the arguments
//! were read.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use axum::http::request::Parts;
use clap::Parser;
use toolgate::ToolDefinition;
use toolgate::http::AuthError;
use toolgate::mcp::{McpHttpOptions, McpServer, ServerIdentity};
use toolgate::prelude::*;
use toolgate::workflow::{Step, Workflow};
use toolgate_tools::files::{self, Sandbox};
use toolgate_tools::{system, tasks};

/// Add two integers.
#[tool(permission = "public", read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Say who is calling, and with which role.
#[tool(permission = "public", read_only)]
fn whoami(#[ctx] caller: Caller) -> String {
    format!("{} ({})", caller.id(), caller.role())
}

/// Reverse a short text.
#[tool(permission = "user", read_only)]
fn reverse_text(
    /// At most 100 characters.
    #[schemars(length(min = 1, max = 100))]
    text: String,
) -> String {
    text.chars().rev().collect()
}

/// Count to `n`, one number per 100 ms, reporting progress: a slow tool, to see progress
/// and cancellation.
#[tool(permission = "user", read_only)]
async fn slow_count(
    #[schemars(range(min = 1, max = 1000))] n: u32,
    #[ctx] context: ToolContext,
) -> u32 {
    for counted in 1..=n {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        context.progress(
            f64::from(counted),
            Some(f64::from(n)),
            format!("counted {counted}"),
        );
    }
    n
}

/// An MCP server with a few tools of its own and the ready tools of `toolgate-tools`.
#[derive(Parser)]
#[command(version, about)]
struct Options {
    /// Serve over stdin/stdout, for one caller.
    #[arg(long, conflicts_with = "http", required_unless_present = "http")]
    stdio: bool,
    /// Serve over Streamable HTTP on this address, e.g. 127.0.0.1:8080 (path `/mcp`).
    #[arg(long, value_name = "ADDRESS")]
    http: Option<SocketAddr>,
    /// The caller's role over stdio.
    #[arg(long, default_value = "user", value_parser = ["public", "user", "admin"])]
    role: String,
    /// Tools per `tools/list` page (over stdio and HTTP).
    #[arg(long, default_value_t = 100)]
    page_size: usize,
    /// A `Host` the HTTP server answers besides the loopback names (repeatable).
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// The file tools' folder (created if missing).
    #[arg(long, env = "MCP_SANDBOX", default_value = "workspace")]
    sandbox: PathBuf,
    /// The task database (created if missing).
    #[arg(long, env = "MCP_TASKS_DB", default_value = tasks::DEFAULT_FILE)]
    tasks_db: PathBuf,
}

fn registry(
    sandbox: &Path,
    tasks_db: &Path,
) -> Result<Registry, Box<dyn std::error::Error + Send + Sync>> {
    std::fs::create_dir_all(sandbox)?;
    let mut builder = Registry::builder()
        .roles(["public", "user", "admin"])
        .state(Sandbox::new(sandbox)?)
        .state(tasks::TaskStore::open(tasks_db)?)
        .tool(system::get_device_info_tool().permission("admin"));
    for tool in files::tools().into_iter().chain(tasks::tools()) {
        builder = builder.tool(tool.permission("user"));
    }
    let registry = builder.build()?;
    let workflow = task_from_file().tool_for(&registry).map_err(|problems| {
        let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
        problems.join("; ")
    })?;
    registry.register(workflow)?;
    Ok(registry)
}

/// A workflow: a task whose title is a file's text (each step as the caller, as if the
/// client had called it).
fn task_from_file() -> Workflow {
    let path = serde_json::json!({
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The file, relative to the sandbox."}},
        "required": ["path"]
    });
    let definition = ToolDefinition::new(
        "task_from_file",
        "Make a task whose title is the text of a file.",
        "user",
        path,
    );
    Workflow::new(
        definition,
        vec![
            Step::new(
                "read",
                "read_file",
                serde_json::json!({"path": "${params.path}"}),
            ),
            Step::new(
                "task",
                "create_task",
                serde_json::json!({"title": "${steps.read.content}"}),
            ),
        ],
    )
}

fn authenticate(parts: &Parts) -> Result<Caller, AuthError> {
    let token = parts
        .headers
        .get("authorization")
        .and_then(|value| value.to_str().ok());
    match token {
        None => Ok(Caller::new("anonymous", "public")),
        Some("Bearer user-token") => Ok(Caller::new("user-1", "user")),
        Some("Bearer admin-token") => Ok(Caller::new("admin-1", "admin")),
        Some(_) => Err(AuthError::unauthenticated("unknown token")),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Logs go to stderr: over stdio, stdout belongs to the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(toolgate::logging::keeping_secrets("warn"))
        .init();
    let options = Options::parse();
    let registry = registry(&options.sandbox, &options.tasks_db)?;
    let Some(address) = options.http else {
        let caller = Caller::new("local-user", options.role);
        let server = McpServer::for_caller(registry, caller)
            .page_size(options.page_size)
            .identity(identity());
        return server.serve_stdio().await;
    };
    let mut http = McpHttpOptions {
        identity: identity(),
        page_size: options.page_size,
        ..McpHttpOptions::default()
    };
    http.allowed_hosts.extend(options.allowed_hosts);
    let app = axum::Router::new().nest_service(
        "/mcp",
        toolgate::mcp::http_service_with(registry, authenticate, http),
    );
    let listener = tokio::net::TcpListener::bind(address).await?;
    eprintln!(
        "MCP over Streamable HTTP on http://{}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, app).await?;
    Ok(())
}

/// Who this server says it is to clients.
fn identity() -> ServerIdentity {
    ServerIdentity::new("toolgate-mcp-example", env!("CARGO_PKG_VERSION"))
        .title("toolgate's example MCP server: files, tasks and programs")
}
