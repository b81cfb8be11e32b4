//! Role-filtered tools over HTTP: an axum [`Router`] the application mounts (feature `axum`).
//!
//! | route | does |
//! |---|---|
//! | `GET /tools?format=...` | the caller's tools: `canonical` (default), `openai`, `openai-strict`, `openai-responses`, `openai-responses-strict`, `anthropic`, `anthropic-strict`, `gemini`, `mcp` |
//! | `POST /tools/call` | one call `{"id", "name", "arguments"}`, or a batch `{"calls": [...], "dry_run": false}` (or a bare array): outcomes in call order |
//! | `GET /approvals` | calls waiting for approval that the caller may decide (see [`Registry::approve`]), each with its tool's `title`, `risk` and `description` |
//! | `POST /approvals/approve` | `{"ticket"}` (the signed ticket, or its short `ticket_id`): runs the call, once |
//! | `POST /approvals/deny` | `{"ticket", "reason"}` |
//! | `GET /me` | `{"id", "role", "approver"}`: the caller, as the [`Authenticate`] hook identified it |
//! | `GET /usage?days=7` (or `since`, `until` in ms) | for approvers: what the tools they may see were used for ([`Registry::usage`]) |
//! | `GET /health` | `{"status": "ok", "tools": n}`, `n` the tools the caller may use |
//! | `GET /events` | server-sent events: the caller's own [events](crate::events) (calls, approvals, agent runs), and the approval requests it may decide with their decisions |
//!
//! [`agent_router`] adds an [`Agent`](crate::agent::Agent):
//!
//! | route | does |
//! |---|---|
//! | `POST /chat` | `{"message", "run_id"?}`: a run for the caller (or its next message in a run); answers the run as it stopped: `status` (`finished`, `needs_approval` with `pending` calls, a limit), `text`, `calls`, `usage` |
//! | `GET /chat/{run}` | the caller's run |
//! | `POST /chat/{run}/resume` | `{"decisions": [{"call_id", "decision": "approve" \| "deny", "reason"?}]}` from an approver (answered with the decided calls' `outcomes` and `still_waiting`, never the conversation); or `{}` from the run's owner to go on once its calls are decided (here or through `/approvals/*`) |
//!
//! `POST` bodies must be `Content-Type: application/json` (else `415`): a browser sends
//! plain-text and form bodies to other sites without asking, so accepting them would let any
//! page make calls with a signed-in user's cookies. Who may approve is the registry's rule
//! ([`RegistryBuilder::approver_role`](crate::RegistryBuilder::approver_role)), the same
//! here as in process.
//!
//! The caller always comes from the application's [`Authenticate`] hook, never from a header
//! a client could set freely. Every error is JSON, `{"error": {"code", "message"}}`, with a
//! fitting status: malformed and oversized bodies, unknown formats, unknown routes,
//! unauthenticated callers, and even a panic in a handler.
//!
//! ```
//! use axum::http::header::AUTHORIZATION;
//! use axum::http::request::Parts;
//! use toolgate::http::{AuthError, HttpOptions, router};
//! use toolgate::{Caller, Registry};
//!
//! let registry = Registry::builder().roles(["public", "staff"]).build().unwrap();
//! let authenticate = |parts: &Parts| -> Result<Caller, AuthError> {
//!     match parts.headers.get(AUTHORIZATION).and_then(|value| value.to_str().ok()) {
//!         Some("Bearer staff-token") => Ok(Caller::new("dr-lee", "staff")),
//!         Some(_) => Err(AuthError::unauthenticated("unknown token")),
//!         None => Ok(Caller::new("anonymous", "public")),
//!     }
//! };
//! let app: axum::Router = router(registry, authenticate, HttpOptions::default());
//! # let _ = app;
//! ```

mod auth;
mod caught;
mod chat;
mod errors;
mod events;
pub(crate) mod extract;
mod handlers;
#[cfg(feature = "oidc")]
mod identity;
mod if_in_place;
mod maybe_text;
mod outcome;
mod search;
#[cfg(feature = "otel")]
pub(crate) mod traced;
pub(crate) mod unread;
mod usage;
mod wire;
mod with_body;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

#[cfg(feature = "mcp")]
pub(crate) use auth::refusal;
pub use auth::{AuthError, AuthFuture, Authenticate};
pub use errors::ApiError;
#[cfg(all(feature = "oidc", feature = "console"))]
pub(crate) use extract::declares_json;
#[cfg(all(feature = "oidc", feature = "console"))]
pub(crate) use identity::cookie_value;
pub use outcome::OutcomeBody;

use crate::registry::Registry;
use caught::Caught;
use with_body::WithBody;

/// Settings of the router.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Largest request body accepted, in bytes (default 1 MiB); larger ones get `413`.
    pub body_limit: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            body_limit: 1024 * 1024,
        }
    }
}

/// What every handler shares.
///
/// Aligned to two cache lines so that, in its `Arc`, it starts on a line of its own: the
/// reference count beside it changes on every request, from every worker thread, and
/// would otherwise take the line holding the registry and the hook away from the others.
#[repr(align(128))]
pub(crate) struct Shared {
    pub(crate) registry: Registry,
    pub(crate) auth: Box<dyn Authenticate>,
    pub(crate) options: HttpOptions,
    pub(crate) agent: Option<crate::agent::Agent>,
}

/// The router serving `registry` to callers that `auth` identifies. Mount it where you like
/// (`Router::new().nest("/ai", router(...))`).
pub fn router(registry: Registry, auth: impl Authenticate, options: HttpOptions) -> Router {
    routes(Shared {
        registry,
        auth: Box::new(auth),
        options,
        agent: None,
    })
}

/// [`router`] for the agent's registry, with the chat routes of `agent` (see the module's
/// table).
pub fn agent_router(
    agent: crate::agent::Agent,
    auth: impl Authenticate,
    options: HttpOptions,
) -> Router {
    routes(Shared {
        registry: agent.registry().clone(),
        auth: Box::new(auth),
        options,
        agent: Some(agent),
    })
}

fn routes(shared: Shared) -> Router {
    let with_agent = shared.agent.is_some();
    let mut router = Router::new()
        .route("/tools", get(Caught(handlers::list_tools)))
        .route("/tools/call", post(Caught(WithBody(handlers::call_tools))))
        .route("/tools/search", get(Caught(search::search)))
        .route("/approvals", get(Caught(handlers::list_approvals)))
        .route(
            "/approvals/approve",
            post(Caught(WithBody(handlers::approve))),
        )
        .route("/approvals/deny", post(Caught(WithBody(handlers::deny))))
        .route("/events", get(Caught(events::events)))
        .route("/me", get(Caught(handlers::me)))
        .route("/usage", get(Caught(usage::usage)))
        .route("/health", get(Caught(handlers::health)));
    if with_agent {
        router = router
            .route("/chat", post(Caught(chat::chat)))
            .route("/chat/{run}", get(Caught(chat::show)))
            .route("/chat/{run}/resume", post(Caught(chat::resume)));
    }
    #[cfg(feature = "otel")]
    let router = traced::traced(router, shared.registry.telemetry());
    // Every handler is `Caught`: a panic is answered with JSON (see `caught`).
    router
        .fallback(Caught(handlers::not_found))
        .method_not_allowed_fallback(Caught(handlers::method_not_allowed))
        .with_state(Arc::new(shared))
}
