//! The `rmcp` server handler over a [`Registry`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Extensions, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

use crate::adapters::http::{AuthError, Authenticate};
use crate::caller::Caller;
use crate::formats::Format;
use crate::registry::Registry;
use crate::util::sync::lock;

use super::identity::ServerIdentity;
use super::list_changes::{ToolsAsOf, notify_visible_changes};
use super::progress;
use crate::progress::LogLevel;

/// Tools per `tools/list` page.
const PAGE_SIZE: usize = 100;

/// How long a client may use a `tools/list` answer before asking again, by default: changes
/// are announced with `notifications/tools/list_changed` anyway.
const LIST_TTL: Duration = Duration::from_secs(60);

/// Where the caller of a request comes from.
#[derive(Clone)]
enum Callers {
    /// One caller for the whole connection (stdio).
    Fixed(Caller),
    /// The application's authentication, per HTTP request.
    Authenticated(Arc<dyn Authenticate>),
}

/// A registry as an MCP server.
#[derive(Clone)]
pub struct McpServer {
    registry: Registry,
    callers: Callers,
    page_size: usize,
    list_ttl: Duration,
    identity: ServerIdentity,
    /// The tools when a `subscriptions/listen` was last accepted and not yet started: its
    /// acknowledgment goes out before [`ServerHandler::listen`] runs, and a change in between
    /// must still be announced. One per session (see [`McpServer::for_session`]).
    listen_accepted_at: Arc<Mutex<Option<ToolsAsOf>>>,
    /// The log level an `initialize` client set with `logging/setLevel` (one per session).
    log_level: Arc<Mutex<Option<LogLevel>>>,
}

impl McpServer {
    /// Serves `registry` to one caller (e.g. the local user of a stdio server).
    pub fn for_caller(registry: Registry, caller: Caller) -> Self {
        McpServer {
            registry,
            callers: Callers::Fixed(caller),
            page_size: PAGE_SIZE,
            list_ttl: LIST_TTL,
            identity: ServerIdentity::default(),
            listen_accepted_at: Arc::default(),
            log_level: Arc::default(),
        }
    }

    pub(super) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The least level of log messages the client of this request wants: the request's own
    /// (`_meta` on 2026-07-28), else the session's (`logging/setLevel`), else none: a tool's
    /// messages go to a client only when it asked.
    pub(super) fn log_level(&self, context: &RequestContext<RoleServer>) -> Option<LogLevel> {
        #[allow(deprecated)] // logging: deprecated by SEP-2577 after 2026-07-28
        let requested = context.meta.log_level().map(progress::level_of);
        requested.or(*lock(&self.log_level))
    }

    /// A copy for a new session: same registry and callers, its own subscription state.
    fn for_session(&self) -> Self {
        McpServer {
            listen_accepted_at: Arc::default(),
            log_level: Arc::default(),
            ..self.clone()
        }
    }

    /// Who the server says it is in `serverInfo` (default: `toolgate` and its version).
    pub fn identity(mut self, identity: ServerIdentity) -> Self {
        self.identity = identity;
        self
    }

    /// Serves over stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let service = self.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok(())
    }

    /// How long a client may keep a `tools/list` answer (`ttlMs`; default 60 s). Its
    /// `cacheScope` is `private` when callers of different roles see different tools,
    /// `public` when everyone sees the same list.
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// Tools per `tools/list` page (default 100).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// The caller of a request or notification: the fixed one, or the application's
    /// authentication of the HTTP request it came in.
    async fn caller(&self, extensions: &Extensions) -> Result<Caller, ErrorData> {
        match &self.callers {
            Callers::Fixed(caller) => Ok(caller.clone()),
            Callers::Authenticated(auth) => {
                let parts = extensions.get::<Parts>().ok_or_else(|| {
                    ErrorData::internal_error("the HTTP request is not available", None)
                })?;
                // Authenticated once already, in front of the MCP layer.
                if let Some(caller) = parts.extensions.get::<Caller>() {
                    return Ok(caller.clone());
                }
                auth.authenticate(parts)
                    .await
                    .map_err(|error| ErrorData::invalid_request(error.message, None))
            }
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)] // logging: deprecated by SEP-2577 after 2026-07-28
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            // No prompts of its own: `prompts/list` answers an empty list, so it is declared.
            .enable_prompts()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities).with_server_info(self.identity.implementation())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context.extensions).await?;
        let tools = self.registry.export(&caller, Format::Mcp);
        let all = tools.as_array().map(Vec::as_slice).unwrap_or_default();
        let start = match request.and_then(|request| request.cursor) {
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= all.len())
                .ok_or_else(|| {
                    ErrorData::invalid_params(format!("invalid cursor \"{cursor}\""), None)
                })?,
            None => 0,
        };
        let end = (start + self.page_size).min(all.len());
        // `resultType`, `ttlMs` and `cacheScope` are required on protocol 2026-07-28 (rmcp
        // drops `resultType` for older peers, which ignore the caching hints).
        let scope = if self.registry.lists_differ_by_role() {
            "private"
        } else {
            "public"
        };
        let mut page = json!({
            "resultType": "complete",
            "ttlMs": u64::try_from(self.list_ttl.as_millis()).unwrap_or(u64::MAX),
            "cacheScope": scope,
            "tools": &all[start..end],
        });
        if end < all.len() {
            page["nextCursor"] = json!(end.to_string());
        }
        serde_json::from_value(page)
            .map_err(|error| ErrorData::internal_error(format!("tool list: {error}"), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        #[cfg(feature = "otel")]
        if let Some(telemetry) = self.registry.telemetry() {
            use opentelemetry::context::FutureExt as _;
            let span = super::traced::call_span(telemetry, &request, &context);
            let answer = Box::pin(self.answer_call(request, context))
                .with_context(span.context().clone())
                .await;
            super::traced::call_ended(span, &answer);
            return answer;
        }
        self.answer_call(request, context).await
    }
    #[allow(deprecated)] // logging: deprecated by SEP-2577 after 2026-07-28
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *lock(&self.log_level) = Some(progress::level_of(request.level));
        Ok(())
    }

    /// Clients of the `initialize` handshake (protocol revisions before 2026-07-28) get
    /// `list_changed` on the connection from here on.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Ok(caller) = self.caller(&context.extensions).await else {
            return;
        };
        let peer = context.peer;
        let watched = peer.clone();
        tokio::spawn(notify_visible_changes(
            self.registry.clone(),
            caller,
            self.registry.tools_now(),
            move || watched.is_transport_closed(),
            move || {
                let peer = peer.clone();
                async move { peer.notify_tool_list_changed().await.is_ok() }
            },
        ));
    }

    /// Protocol 2026-07-28 clients ask for `list_changed` with `subscriptions/listen`; this
    /// server offers tool list changes and nothing else.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Keep the oldest moment not yet taken: measuring from earlier can only announce a
        // real change of the caller's own list, never miss one.
        lock(&self.listen_accepted_at).get_or_insert_with(|| self.registry.tools_now());
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        // Boxed, like a call: every request's future is as large as the largest handler's.
        Box::pin(self.listen_for_changes(subscription)).await
    }
}

impl McpServer {
    /// `subscriptions/listen`: tool list changes, until the client cancels or goes.
    async fn listen_for_changes(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let since = lock(&self.listen_accepted_at)
            .take()
            .unwrap_or_else(|| self.registry.tools_now());
        if subscription.accepted().tools_list_changed != Some(true) {
            subscription.cancelled().await;
            return Ok(());
        }
        let caller = self
            .caller(&subscription.request_context().extensions)
            .await?;
        let sink = subscription.sink().clone();
        // The stream's own end is awaited below, so `gone` need not look for it.
        let notifying = notify_visible_changes(
            self.registry.clone(),
            caller,
            since,
            || false,
            move || {
                let sink = sink.clone();
                async move { sink.notify_tool_list_changed().await.is_ok() }
            },
        );
        // Ends when the client cancels the listen request or the connection closes.
        tokio::select! {
            () = subscription.cancelled() => {}
            () = notifying => {}
        }
        Ok(())
    }
}

/// Serves `registry` over stdin/stdout for `caller` until the client disconnects (with the
/// default [`ServerIdentity`]; [`McpServer::serve_stdio`] for another).
pub async fn serve_stdio(
    registry: Registry,
    caller: Caller,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    McpServer::for_caller(registry, caller).serve_stdio().await
}

/// Settings of [`http_service_with`].
#[derive(Debug, Clone)]
pub struct McpHttpOptions {
    /// `Host` values accepted (names, or `name:port`). Default: `localhost`, `127.0.0.1`,
    /// `::1` only, which guards a local server against DNS rebinding; a server reached from
    /// other machines names the hosts it is reached by.
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted, with scheme (`https://app.example.com:443`,
    /// `http://localhost:*`). Default: none checked (requests without `Origin` always pass).
    pub allowed_origins: Vec<String>,
    /// Where the protected resource metadata of this server is published (MCP authorization),
    /// named in the `WWW-Authenticate` header of a `401` so clients can find how to sign in.
    pub resource_metadata: Option<String>,
    /// Who the server says it is in `serverInfo` (default: `toolgate` and its version).
    pub identity: ServerIdentity,
    /// How long a client may keep a `tools/list` answer (default 60 s; see
    /// [`McpServer::list_ttl`]).
    pub list_ttl: Duration,
    /// Tools per `tools/list` page (default 100).
    pub page_size: usize,
}

impl Default for McpHttpOptions {
    fn default() -> Self {
        McpHttpOptions {
            allowed_hosts: StreamableHttpServerConfig::default().allowed_hosts,
            allowed_origins: Vec::new(),
            resource_metadata: None,
            identity: ServerIdentity::default(),
            list_ttl: LIST_TTL,
            page_size: PAGE_SIZE,
        }
    }
}

/// A Streamable HTTP MCP endpoint with the default [`McpHttpOptions`] (loopback hosts
/// only); see [`http_service_with`].
pub fn http_service(registry: Registry, auth: impl Authenticate) -> Router {
    http_service_with(registry, auth, McpHttpOptions::default())
}

/// A Streamable HTTP MCP endpoint, as a router to mount in an axum application
/// (`Router::new().nest_service("/mcp", http_service_with(registry, auth, options))`).
///
/// Every request is authenticated by `auth` before the MCP layer sees it: a refused request
/// gets `401` (or `403`) with a `WWW-Authenticate: Bearer` header, as MCP's authorization
/// spec asks, so a client can sign in again. The caller found is the one the request's
/// calls run as.
pub fn http_service_with(
    registry: Registry,
    auth: impl Authenticate,
    options: McpHttpOptions,
) -> Router {
    let auth: Arc<dyn Authenticate> = Arc::new(auth);
    let server = McpServer {
        registry,
        callers: Callers::Authenticated(Arc::clone(&auth)),
        page_size: options.page_size.max(1),
        list_ttl: options.list_ttl,
        identity: options.identity.clone(),
        listen_accepted_at: Arc::default(),
        log_level: Arc::default(),
    };
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::<LocalSessionManager>::default(),
        config,
    );
    let gate = Arc::new(Gate {
        auth,
        resource_metadata: options.resource_metadata,
    });
    Router::new()
        .fallback_service(mcp)
        .layer(axum::middleware::from_fn_with_state(
            gate,
            authenticate_first,
        ))
}

/// What the authentication in front of the MCP layer needs.
struct Gate {
    auth: Arc<dyn Authenticate>,
    resource_metadata: Option<String>,
}

/// Authenticates the request; keeps the caller in its extensions for the MCP handlers. An
/// answer sent with the body unread (a refusal, ours or rmcp's) waits until it is read.
async fn authenticate_first(
    axum::extract::State(gate): axum::extract::State<Arc<Gate>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (mut parts, body) = request.into_parts();
    match gate.auth.authenticate(&parts).await {
        Ok(caller) => {
            parts.extensions.insert(caller);
            let (body, unread) = crate::adapters::http::unread::watched(body);
            let answer = next
                .run(axum::extract::Request::from_parts(parts, body))
                .await;
            unread.read_before(answer).await
        }
        Err(error) => {
            crate::adapters::http::unread::after_reading(body, refused(&gate, error)).await
        }
    }
}

fn refused(gate: &Gate, error: AuthError) -> axum::response::Response {
    crate::adapters::http::refusal(error, gate.resource_metadata.as_deref())
}

impl McpServer {
    /// Answers a `tools/call` (in its span, where the registry has telemetry).
    async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context.extensions).await?;
        let Some(definition) = self.registry.definition(&caller, &request.name) else {
            // Hidden tools answer exactly like unknown ones, with the same "did you mean".
            let error = self.registry.unknown_tool(&caller, &request.name);
            return Err(ErrorData::invalid_params(error.message, None));
        };
        // Boxed: rmcp moves each request's future into a task of its own, so its size is
        // copied per request; the call's is large (the registry's path, the client's rounds).
        Box::pin(self.call(&caller, &definition, request, &context)).await
    }
}
