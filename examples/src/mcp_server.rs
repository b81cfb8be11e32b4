//! An MCP server: a few tools of its own and the ready tools of `toolgate-tools`, over stdio
//! or Streamable HTTP.
//!
//! ```sh
//! cargo run -p toolgate-examples --bin mcp_server -- --stdio --role user [--page-size 100]
//! cargo run -p toolgate-examples --bin mcp_server -- --http 127.0.0.1:8080
//! ```
//!
//! Over HTTP, `Authorization: Bearer user-token` or `admin-token` picks the role; without a
//! token the caller is `public`. The sandbox folder is `MCP_SANDBOX` (default `./workspace`),
//! the task database `MCP_TASKS_DB` (default `tasks.db`).

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::http::request::Parts;
use rmcp::ServiceExt;
use toolgate::http::AuthError;
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
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

/// Count to `n`, one number per 100 ms: a slow tool, to see cancellation.
#[tool(permission = "user", read_only)]
async fn slow_count(#[schemars(range(min = 1, max = 1000))] n: u32) -> u32 {
    for _ in 0..n {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    n
}

fn registry() -> Result<Registry, Box<dyn std::error::Error + Send + Sync>> {
    let sandbox =
        PathBuf::from(std::env::var("MCP_SANDBOX").unwrap_or_else(|_| "workspace".into()));
    std::fs::create_dir_all(&sandbox)?;
    let tasks_db = std::env::var("MCP_TASKS_DB").unwrap_or_else(|_| tasks::DEFAULT_FILE.into());
    let mut builder = Registry::builder()
        .roles(["public", "user", "admin"])
        .state(Sandbox::new(&sandbox)?)
        .state(tasks::TaskStore::open(tasks_db)?)
        .tool(system::get_device_info_tool().permission("admin"));
    for tool in files::tools().into_iter().chain(tasks::tools()) {
        builder = builder.tool(tool.permission("user"));
    }
    Ok(builder.build()?)
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
        .with_env_filter("warn")
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value_of = |flag: &str| {
        args.iter()
            .position(|arg| arg == flag)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    let registry = registry()?;
    if args.iter().any(|arg| arg == "--stdio") {
        let role = value_of("--role").unwrap_or_else(|| "user".into());
        let page_size = value_of("--page-size")
            .and_then(|size| size.parse().ok())
            .unwrap_or(100);
        let server =
            McpServer::for_caller(registry, Caller::new("local-user", role)).page_size(page_size);
        let service = server.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        return Ok(());
    }
    let Some(address) = value_of("--http") else {
        eprintln!("usage: mcp_server --stdio [--role ROLE] | --http ADDRESS");
        std::process::exit(2);
    };
    let address: SocketAddr = address.parse()?;
    let app = axum::Router::new()
        .nest_service("/mcp", toolgate::mcp::http_service(registry, authenticate));
    let listener = tokio::net::TcpListener::bind(address).await?;
    eprintln!(
        "MCP over Streamable HTTP on http://{}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, app).await?;
    Ok(())
}
