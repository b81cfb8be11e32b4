//! Role-filtered tools over HTTP: an axum [`Router`] the application mounts (feature `axum`).
//!
//! | route | does |
//! |---|---|
//! | `GET /tools?format=...` | the caller's tools: `canonical` (default), `openai`, `openai-strict`, `openai-responses`, `openai-responses-strict`, `anthropic`, `anthropic-strict`, `gemini`, `mcp` |
//! | `POST /tools/call` | one call `{"id", "name", "arguments"}`, or a batch `{"calls": [...], "dry_run": false}` (or a bare array): outcomes in call order |
//! | `GET /approvals` | calls waiting for approval that the caller may decide (see [`Registry::approve`]) |
//! | `POST /approvals/approve` | `{"ticket"}`: runs the call, once |
//! | `POST /approvals/deny` | `{"ticket", "reason"}` |
//! | `GET /health` | `{"status": "ok", "tools": n}`, `n` the tools the caller may use |
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
//! use axum::http::request::Parts;
//! use toolgate::http::{AuthError, HttpOptions, router};
//! use toolgate::{Caller, Registry};
//!
//! let registry = Registry::builder().roles(["public", "staff"]).build().unwrap();
//! let authenticate = |parts: &Parts| -> Result<Caller, AuthError> {
//!     match parts.headers.get("authorization").and_then(|value| value.to_str().ok()) {
//!         Some("Bearer staff-token") => Ok(Caller::new("dr-lee", "staff")),
//!         Some(_) => Err(AuthError::unauthenticated("unknown token")),
//!         None => Ok(Caller::new("anonymous", "public")),
//!     }
//! };
//! let app: axum::Router = router(registry, authenticate, HttpOptions::default());
//! # let _ = app;
//! ```

mod auth;
mod errors;
mod extract;
mod handlers;
mod wire;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tower_http::catch_panic::CatchPanicLayer;

pub use auth::{AuthError, Authenticate};
pub use errors::ApiError;
pub use wire::OutcomeBody;

use crate::registry::Registry;

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
pub(crate) struct Shared {
    pub(crate) registry: Registry,
    pub(crate) auth: Box<dyn Authenticate>,
    pub(crate) options: HttpOptions,
}

/// The router serving `registry` to callers that `auth` identifies. Mount it where you like
/// (`Router::new().nest("/ai", router(...))`).
pub fn router(registry: Registry, auth: impl Authenticate, options: HttpOptions) -> Router {
    let body_limit = options.body_limit;
    let shared = Arc::new(Shared {
        registry,
        auth: Box::new(auth),
        options,
    });
    Router::new()
        .route("/tools", get(handlers::list_tools))
        .route("/tools/call", post(handlers::call_tools))
        .route("/approvals", get(handlers::list_approvals))
        .route("/approvals/approve", post(handlers::approve))
        .route("/approvals/deny", post(handlers::deny))
        .route("/health", get(handlers::health))
        .fallback(handlers::not_found)
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(CatchPanicLayer::custom(errors::panic_response))
        .with_state(shared)
}
