//! Importing the tools of external MCP servers into a registry.
//!
//! One [`McpImport`] per server (a command run over stdio, or a Streamable HTTP URL) — for
//! instance one per remote machine, each with its own permission and allowlist. Its tools
//! become run-time tools named `mcp_<server>_<tool>` (prefix configurable), validated by the
//! registry against the server's own input schema before anything is forwarded, with risk
//! and hints from the server's annotations (destructive tools need approval under the
//! default policy). A server that crashes or hangs gives a clear error and is restarted (or
//! reconnected) on the next call.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, Tool as RemoteTool};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::sync::Mutex;

use crate::context::ToolContext;
use crate::definition::{Hints, Risk, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::tool::{Tool, ToolFuture};

/// Where an external MCP server is.
#[derive(Debug, Clone)]
enum Source {
    Command {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    Http {
        url: String,
        bearer: Option<String>,
    },
}

/// Why a server's tools could not be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpImportError {
    /// The server's name.
    pub server: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for McpImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP server `{}`: {}", self.server, self.message)
    }
}

impl std::error::Error for McpImportError {}

/// How to import one external server's tools.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use toolgate::mcp::McpImport;
///
/// let lab = McpImport::command("lab", "ssh", ["lab-pc", "mcp-files-server"])
///     .permission("staff")
///     .allow(["read_file", "list_directory"])
///     .connect()
///     .await?;
/// let mut builder = toolgate::Registry::builder().roles(["public", "staff"]);
/// for tool in lab.tools() {
///     builder = builder.tool(tool); // named mcp_lab_read_file, mcp_lab_list_directory
/// }
/// # let _ = builder;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct McpImport {
    server: String,
    source: Source,
    permission: String,
    prefix: Option<String>,
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    call_timeout: Duration,
    connect_timeout: Duration,
    /// A setting made for the other kind of server, reported by `connect`.
    misuse: Option<String>,
}

impl McpImport {
    fn new(server: impl Into<String>, source: Source) -> Self {
        McpImport {
            server: server.into(),
            source,
            permission: String::new(),
            prefix: None,
            allow: None,
            deny: Vec::new(),
            call_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(30),
            misuse: None,
        }
    }

    /// A server started as a child process, spoken to over its stdin/stdout. It starts
    /// with an environment of its own, not toolgate's: `PATH`, `HOME`, `LANG`, `LC_ALL`,
    /// `TMPDIR`, `TZ` and `USER` as toolgate has them, and what [`env`](Self::env) adds
    /// (anything else, bearer tokens and keys included, stays behind).
    pub fn command<I, S>(server: impl Into<String>, program: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let source = Source::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        };
        Self::new(server, source)
    }

    /// A server at a Streamable HTTP URL.
    pub fn http(server: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            server,
            Source::Http {
                url: url.into(),
                bearer: None,
            },
        )
    }

    /// An environment variable for the child process of a [`command`](Self::command)
    /// server; on an HTTP server, [`connect`](Self::connect) fails saying so.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.source {
            Source::Command { env, .. } => env.push((key.into(), value.into())),
            Source::Http { .. } => {
                self.misuse = Some("`.env(..)` sets the environment of a command server's process; this server is reached over HTTP".into());
            }
        }
        self
    }

    /// A bearer token sent to an [`http`](Self::http) server; on a command server,
    /// [`connect`](Self::connect) fails saying so.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        match &mut self.source {
            Source::Http { bearer, .. } => *bearer = Some(token.into()),
            Source::Command { .. } => {
                self.misuse = Some("`.bearer_token(..)` is sent to HTTP servers; this server is a command spoken to over stdio (pass secrets with `.env(..)`)".into());
            }
        }
        self
    }

    /// The role the imported tools need (required).
    pub fn permission(mut self, role: impl Into<String>) -> Self {
        self.permission = role.into();
        self
    }

    /// The name prefix (default `mcp_<server>_`).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Import only these tools (by the server's names).
    pub fn allow<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Do not import these tools (by the server's names).
    pub fn deny<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(tools.into_iter().map(Into::into));
        self
    }

    /// How long a forwarded call may take before the server is considered hung (and is
    /// restarted); default 30 s.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long connecting may take, the handshake and the first `tools/list` together (and
    /// each reconnection's handshake); default 30 s. A server that never answers is given
    /// up on with an error saying so, and a command's process is killed.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    fn error(&self, message: impl Into<String>) -> McpImportError {
        McpImportError {
            server: self.server.clone(),
            message: message.into(),
        }
    }

    /// Connects, lists the server's tools and keeps those the filters admit.
    pub async fn connect(self) -> Result<ImportedServer, McpImportError> {
        if self.permission.is_empty() {
            return Err(self.error("no permission set: call `.permission(\"role\")`"));
        }
        if let Some(misuse) = &self.misuse {
            return Err(self.error(misuse.clone()));
        }
        let connecting = async {
            let service = start(&self.source, self.connect_timeout).await?;
            let tools = service.peer().list_all_tools().await;
            let tools = tools.map_err(|error| format!("tools/list failed: {error}"))?;
            Ok::<_, String>((service, tools))
        };
        let (service, tools) = tokio::time::timeout(self.connect_timeout, connecting)
            .await
            .map_err(|_| self.error(no_answer(self.connect_timeout)))?
            .map_err(|message| self.error(message))?;
        let tools = tools
            .into_iter()
            .filter(|tool| {
                self.allow
                    .as_ref()
                    .is_none_or(|allow| allow.iter().any(|name| name == &*tool.name))
            })
            .filter(|tool| !self.deny.iter().any(|name| name == &*tool.name))
            .collect();
        let connection = Arc::new(Connection {
            import: self,
            service: Mutex::new(Some(service)),
        });
        Ok(ImportedServer { connection, tools })
    }
}

/// What a command server is given of toolgate's environment: what finding programs, a home
/// folder, a locale and a time zone take. Everything else (the tokens a configuration reads
/// from the environment, keys, whatever the host set) stays behind.
const PASSED_ON: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "USER"];

/// Starts (or reaches) the server and makes the MCP handshake, within `deadline`.
async fn start(
    source: &Source,
    deadline: Duration,
) -> Result<RunningService<RoleClient, ()>, String> {
    // Given up on, the handshake's future is dropped with its transport: a command's
    // process is killed there and then.
    tokio::time::timeout(deadline, handshake(source))
        .await
        .map_err(|_| no_answer(deadline))?
}

/// What a server that did not answer in time is told.
fn no_answer(deadline: Duration) -> String {
    format!(
        "the server did not answer within {:.1} s (the MCP handshake and its tool list); check that it speaks MCP on its stdin/stdout or at its URL, or give it longer with `connect_timeout`",
        deadline.as_secs_f64()
    )
}

async fn handshake(source: &Source) -> Result<RunningService<RoleClient, ()>, String> {
    match source {
        Source::Command { program, args, env } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args).env_clear();
            for name in PASSED_ON {
                if let Some(value) = std::env::var_os(name) {
                    command.env(name, value);
                }
            }
            command.envs(env.iter().cloned());
            // A server dropped with its connection is killed there and then, with every
            // process it started (`npx` starts `node`, `sh -c` its command): the shutdown
            // the transport starts in the background never finishes where the runtime
            // ends first, and a hung server would be left running.
            let mut command = process_wrap::tokio::CommandWrap::from(command);
            command
                .wrap(process_wrap::tokio::ProcessGroup::leader())
                .wrap(process_wrap::tokio::KillOnDrop);
            let transport = TokioChildProcess::new(command)
                .map_err(|error| format!("`{program}` could not be started: {error}"))?;
            ().serve(transport)
                .await
                .map_err(|error| format!("the MCP handshake failed: {error}"))
        }
        Source::Http { url, bearer } => {
            let mut config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(token) = bearer {
                config = config.auth_header(token.clone());
            }
            let transport = StreamableHttpClientTransport::from_config(config);
            ().serve(transport)
                .await
                .map_err(|error| format!("the MCP handshake with {url} failed: {error}"))
        }
    }
}

/// A connection to one server, restarted after a crash or a hang.
struct Connection {
    import: McpImport,
    service: Mutex<Option<RunningService<RoleClient, ()>>>,
}

impl Connection {
    async fn call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, ToolError> {
        let server = &self.import.server;
        let peer = {
            let mut service = self.service.lock().await;
            if service.as_ref().is_none_or(RunningService::is_closed) {
                tracing::warn!(server, "(re)starting the MCP server connection");
                *service = Some(
                    start(&self.import.source, self.import.connect_timeout)
                        .await
                        .map_err(|message| unavailable(server, &message))?,
                );
            }
            service
                .as_ref()
                .map(|service| service.peer().clone())
                .ok_or_else(|| unavailable(server, "not connected"))?
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = match arguments {
            Value::Object(map) => Some(map),
            _ => Some(Map::new()),
        };
        // One trace across processes: the imported server's span is a child of this call's.
        #[cfg(feature = "otel")]
        {
            let mut meta = rmcp::model::RequestMetaObject::default();
            crate::telemetry::propagation::into_meta(&mut meta.0);
            params.meta = (!meta.0.is_empty()).then_some(meta);
        }
        let answer =
            tokio::time::timeout(self.import.call_timeout, peer.call_tool_once(params)).await;
        let failure = match answer {
            Ok(Ok(CallToolResponse::Complete(result))) => return Ok(result),
            Ok(Ok(_)) => {
                return Err(ToolError::execution(format!(
                    "MCP server `{server}` asked for more input, which is not supported"
                )));
            }
            Ok(Err(error)) => ToolError::new(
                "server_unavailable",
                format!("MCP server `{server}` failed: {error}; it will be restarted"),
            ),
            Err(_) => ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "MCP server `{server}` did not answer within {} s; it will be restarted",
                    self.import.call_timeout.as_secs_f64()
                ),
            ),
        };
        // Drop the connection; the next call starts afresh. The child is shut down in the
        // background: waiting for it to exit would hold this answer past its deadline.
        let stale = self.service.lock().await.take();
        if let Some(service) = stale {
            tokio::spawn(async move {
                let _ = service.cancel().await;
            });
        }
        Err(failure)
    }
}

fn unavailable(server: &str, message: &str) -> ToolError {
    ToolError::new(
        "server_unavailable",
        format!("MCP server `{server}` is unavailable: {message}"),
    )
}

/// The imported tools of one server, sharing its connection.
pub struct ImportedServer {
    connection: Arc<Connection>,
    tools: Vec<RemoteTool>,
}

impl ImportedServer {
    /// The tools, ready for [`RegistryBuilder::tool`](crate::RegistryBuilder::tool) or
    /// [`Registry::register`](crate::Registry::register).
    pub fn tools(&self) -> Vec<ImportedTool> {
        let import = &self.connection.import;
        let prefix = import
            .prefix
            .clone()
            .unwrap_or_else(|| format!("mcp_{}_", import.server));
        self.tools
            .iter()
            .map(|remote| ImportedTool {
                connection: Arc::clone(&self.connection),
                remote_name: remote.name.to_string(),
                definition: definition_of(remote, &prefix, &import.permission, &import.server),
            })
            .collect()
    }
}

/// One tool of an external MCP server.
pub struct ImportedTool {
    connection: Arc<Connection>,
    remote_name: String,
    definition: ToolDefinition,
}

impl Tool for ImportedTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn call(&self, _context: ToolContext, arguments: Value) -> ToolFuture {
        let (connection, name) = (Arc::clone(&self.connection), self.remote_name.clone());
        let structured = self.definition.output_schema.is_some();
        Box::pin(async move { result_of(connection.call(&name, arguments).await?, structured) })
    }
}

/// A registry name: the prefix and the server's name, in the allowed alphabet and length.
pub(in crate::adapters) fn local_name(prefix: &str, remote: &str) -> String {
    let name: String = format!("{prefix}{remote}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.chars().take(64).collect()
}

pub(in crate::adapters) fn definition_of(
    remote: &RemoteTool,
    prefix: &str,
    permission: &str,
    server: &str,
) -> ToolDefinition {
    let mut input_schema = Value::Object((*remote.input_schema).clone());
    if input_schema.get("type").is_none() {
        input_schema["type"] = json!("object");
    }
    let description = remote
        .description
        .as_deref()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("Tool `{}` of the MCP server `{server}`.", remote.name));
    let mut definition = ToolDefinition::new(
        local_name(prefix, &remote.name),
        description,
        permission,
        input_schema,
    );
    definition.title = remote.title.clone();
    definition.output_schema = remote
        .output_schema
        .as_ref()
        .map(|schema| Value::Object((**schema).clone()));
    // Without an output schema a result is content blocks: images, audio and resources are
    // kept, not only the text.
    definition.returns_content = definition.output_schema.is_none();
    // Another server's answer: data from outside, whatever its hints say.
    definition.untrusted_results = true;
    let annotations = remote.annotations.as_ref();
    let read_only = annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
    // MCP's defaults: a tool that does not say otherwise may be destructive and open-world.
    definition.hints = Hints {
        read_only,
        destructive: !read_only && annotations.and_then(|a| a.destructive_hint).unwrap_or(true),
        idempotent: annotations.and_then(|a| a.idempotent_hint).unwrap_or(false),
        open_world: annotations.and_then(|a| a.open_world_hint).unwrap_or(true),
    };
    definition.risk = match (read_only, definition.hints.destructive) {
        (true, _) => Risk::Low,
        (false, true) => Risk::High,
        (false, false) => Risk::Medium,
    };
    definition.group = Some(format!("mcp:{server}"));
    definition
}

/// The server's answer as a tool result: errors as errors; for a tool with an output schema
/// its structured content (or the text, parsed when it is JSON); otherwise the content
/// blocks as they came, a block of a kind toolgate does not know described in text.
pub(in crate::adapters) fn result_of(
    result: CallToolResult,
    structured: bool,
) -> Result<Value, ToolError> {
    let text: String = result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    if result.is_error == Some(true) {
        return Err(ToolError::execution(if text.is_empty() {
            "the MCP tool failed".to_owned()
        } else {
            text
        }));
    }
    if !structured {
        return Ok(Value::Array(
            result.content.iter().map(content_block).collect(),
        ));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// One remote content block as a [`Content`](crate::content::Content) block.
fn content_block(block: &rmcp::model::ContentBlock) -> Value {
    let value = serde_json::to_value(block).unwrap_or(Value::Null);
    match serde_json::from_value::<crate::content::Content>(value.clone()) {
        Ok(known) => serde_json::to_value(known).unwrap_or(Value::Null),
        Err(_) => {
            let kind = value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            json!({"type": "text", "text": format!("[content of type `{kind}` left out]")})
        }
    }
}
