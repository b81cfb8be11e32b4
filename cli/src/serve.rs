//! `toolgate serve`: everything the config defines, each caller seeing what its role
//! allows; tool files are watched and changes applied while serving.

use anstream::eprintln;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::config::{BuildOptions, Built, Gate};
use clap::{Args, Subcommand};
use toolgate::console::{Console, SignIn};
use toolgate::http::HttpOptions;
use toolgate::mcp::McpHttpOptions;
use toolgate_tools::file_tools::Watching;

use crate::failure::Failure;
use crate::serve_summary;
use crate::setup::{self, Acting};

/// How long tool folders must be quiet before changes are applied.
const RELOAD_QUIET: Duration = Duration::from_millis(300);

#[derive(Subcommand)]
pub enum ServeCommand {
    /// MCP over stdin/stdout (as one caller), or Streamable HTTP at `/mcp` (callers by
    /// their bearer tokens).
    Mcp(McpArgs),
    /// The HTTP API: `GET /tools`, `POST /tools/call`, the approval routes (callers by their
    /// bearer tokens).
    Http(HttpArgs),
}

#[derive(Args)]
pub struct McpArgs {
    /// Serve over stdin/stdout.
    #[arg(long, conflicts_with = "http", required_unless_present = "http")]
    stdio: bool,
    /// Serve Streamable HTTP on this address, e.g. 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Over stdio: the caller (default: the lowest role).
    #[command(flatten)]
    acting: Acting,
    /// Over HTTP: a `Host` the server is reached by, besides localhost (repeatable).
    #[arg(long, value_name = "HOST")]
    allow_host: Vec<String>,
}

#[derive(Args)]
pub struct HttpArgs {
    /// The address, e.g. 127.0.0.1:8080 (port 0 picks a free one).
    addr: SocketAddr,
}

pub async fn run(config: &Path, command: ServeCommand) -> Result<ExitCode, Failure> {
    init_logging();
    let (config, built) = setup::load(config, BuildOptions::default()).await?;
    let _watching = watch(&built);
    let _rules = crate::rules::watch(&config, &built.registry);
    let identity = config.identity(built.registry.roles())?;
    if let Some(identity) = &identity
        && let Err(error) = identity.ready().await
    {
        // Not fatal: tokens are checked once it answers (503 until then).
        eprintln!("{} {error}", crate::output::warn("identity provider:"));
    }
    let gate = Gate::new(built.callers.clone(), identity.clone());
    let published = identity
        .as_ref()
        .map(|identity| identity.metadata_router())
        .unwrap_or_default();
    let published = published.merge(devices(&config, &built, gate.clone())?);
    match command {
        ServeCommand::Mcp(args) if args.stdio => {
            if built.devices.is_some() {
                eprintln!(
                    "{} devices connect to `serve http` or `serve mcp --http`, not over stdio",
                    crate::output::warn("devices:")
                );
            }
            let lowest = setup::lowest_role(&built);
            let caller = args.acting.caller(&built, &lowest)?;
            toolgate::mcp::serve_stdio(built.registry.clone(), caller)
                .await
                .map_err(|error| Failure::failed(format!("the MCP connection failed: {error}")))?;
        }
        ServeCommand::Mcp(args) => {
            let Some(addr) = args.http else {
                return Err(Failure::usage("give --stdio or --http ADDR"));
            };
            let mut options = McpHttpOptions::default();
            options.allowed_hosts.extend(args.allow_host);
            options.resource_metadata = identity.and_then(|i| i.resource_metadata_url());
            let service = toolgate::mcp::http_service_with(built.registry.clone(), gate, options);
            let app = axum::Router::new()
                .nest_service("/mcp", service)
                .merge(published);
            let listener = bind(addr).await?;
            let base = base_of(&listener)?;
            let mut places = vec![("MCP", format!("{base}/mcp"))];
            places.extend(device_place(&built, &base));
            serve_summary::say(&config, &built, &places);
            eprintln!("listening on {base}/mcp");
            listen(listener, app).await?;
        }
        ServeCommand::Http(args) => {
            let console = Console::new()
                .title("toolgate")
                .sign_in(SignIn::BearerToken)
                .router();
            let app = toolgate::http::router(built.registry.clone(), gate, HttpOptions::default())
                .merge(console)
                .merge(published);
            let listener = bind(args.addr).await?;
            let base = base_of(&listener)?;
            let mut places = vec![
                ("HTTP API", format!("{base}/tools")),
                (
                    "console",
                    format!("{base}/console (sign in with a caller's token)"),
                ),
            ];
            places.extend(device_place(&built, &base));
            serve_summary::say(&config, &built, &places);
            eprintln!("listening on {base}");
            listen(listener, app).await?;
        }
    }
    setup::send_telemetry(&built).await;
    Ok(ExitCode::SUCCESS)
}

/// The routes of the configured devices (`[devices.ID]`): their links, `GET /devices`
/// and revocation; none without devices.
fn devices(
    config: &crate::config::Config,
    built: &Built,
    gate: Gate,
) -> Result<axum::Router, Failure> {
    let Some(hub) = &built.devices else {
        return Ok(axum::Router::new());
    };
    hub.router(built.registry.clone(), gate)
        .map_err(|error| Failure::usage(format!("{}: {error}", config.path().display())))
}

/// Where devices connect (`toolgate device --hub <base>`), when the config has any.
fn device_place(built: &Built, base: &str) -> Option<(&'static str, String)> {
    let hub = built.devices.as_ref()?;
    let count = hub.devices().len();
    let place =
        format!("{base}/devices/connect ({count} configured; `toolgate device --hub {base}`)");
    Some(("devices", place))
}

/// Watches the tool folders; a folder that cannot be watched is reported and serving goes on.
fn watch(built: &Built) -> Option<Watching> {
    let registered = toolgate_tools::file_tools::Registered {
        tools: built.registered_files.tools.clone(),
        problems: built.file_problems.clone(),
    };
    match built
        .file_tools
        .clone()
        .watch(built.registry.clone(), registered, RELOAD_QUIET)
    {
        Ok(watching) => Some(watching),
        Err(error) => {
            tracing::warn!(%error, "tool files will not be reloaded");
            None
        }
    }
}

async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, Failure> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| Failure::failed(format!("cannot listen on {addr}: {error}")))
}

/// `http://ADDRESS:PORT` of a bound listener.
fn base_of(listener: &tokio::net::TcpListener) -> Result<String, Failure> {
    let bound = listener
        .local_addr()
        .map_err(|error| Failure::failed(error.to_string()))?;
    Ok(format!("http://{bound}"))
}

async fn listen(listener: tokio::net::TcpListener, app: axum::Router) -> Result<(), Failure> {
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|error| Failure::failed(format!("serving failed: {error}")))
}

/// Logs on stderr (stdout may be the MCP channel), `RUST_LOG` to choose; dependencies that
/// would log raw requests (secrets included) are held back whatever it says.
pub fn init_logging() {
    let asked = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn,toolgate_tools=info".into());
    let filter = tracing_subscriber::EnvFilter::new(toolgate::logging::keeping_secrets(&asked));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
