//! The veterinary clinic backend: tools for four roles (public < customer < staff < admin),
//! data in SQLite, served over HTTP with bearer tokens.

mod db;
mod tools;

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::http::request::Parts;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::{Caller, Registry};

pub use db::{Clinic, SEEDED_USERS};
pub use tools::{Weekday, hours_for};

/// The roles, lowest first.
pub const ROLES: [&str; 4] = ["public", "customer", "staff", "admin"];

/// The registry of the clinic's tools, with the clinic's data as state; only admins approve.
pub fn registry(clinic: Arc<Clinic>) -> Result<Registry, toolgate::BuildError> {
    Registry::builder()
        .roles(ROLES)
        .shared_state(clinic)
        .filter_linked(|tool| tool.group.as_deref() == Some(tools::GROUP))
        .approver_role("admin")
        .audit_sink(toolgate::audit::TracingSink)
        .build()
}

/// The HTTP app: toolgate's router, with callers from bearer tokens.
pub fn app(registry: Registry, clinic: Arc<Clinic>) -> Router {
    let authenticate = move |parts: &Parts| -> Result<Caller, AuthError> {
        let Some(header) = parts.headers.get("authorization") else {
            return Ok(Caller::new("anonymous", "public"));
        };
        let token = header
            .to_str()
            .ok()
            .and_then(|value| value.strip_prefix("Bearer "))
            .ok_or_else(|| AuthError::unauthenticated("use `Authorization: Bearer <token>`"))?;
        clinic
            .user_for_token(token)
            .map(|(id, role)| Caller::new(id, role))
            .ok_or_else(|| AuthError::unauthenticated("unknown token"))
    };
    router(registry, authenticate, HttpOptions::default())
}

/// Opens (creating and seeding on first run) the database and builds the app.
pub fn open_app(database: &Path) -> Result<Router, Box<dyn std::error::Error + Send + Sync>> {
    let clinic = Arc::new(Clinic::open(database)?);
    let registry = registry(Arc::clone(&clinic))?;
    Ok(app(registry, clinic))
}
