//! The veterinary clinic backend: tools for four roles (public < customer < staff < admin),
//! data in SQLite, served over HTTP with bearer tokens, and an assistant (`POST /chat`) that
//! uses the same tools with the caller's role.

mod db;
mod tools;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use toolgate::agent::models::OpenAiChat;
use toolgate::agent::{Agent, AgentBuilder, Model};
use toolgate::cedar::CedarPolicies;
use toolgate::console::{Console, SignIn};
use toolgate::http::{AuthError, HttpOptions, agent_router};
use toolgate::rate_limits::RateLimit;
use toolgate::store::Stores;
use toolgate::{Caller, Registry, RegistryBuilder};

pub use db::{Clinic, SEEDED_USERS, User};
pub use tools::{Weekday, hours_for};

/// The roles, lowest first.
pub const ROLES: [&str; 4] = ["public", "customer", "staff", "admin"];

/// The registry of the clinic's tools, with the clinic's data as state; only admins approve.
pub fn registry(clinic: Arc<Clinic>) -> Result<Registry, toolgate::BuildError> {
    registry_builder(clinic).build()
}

/// [`registry`], before it is built (to add an in-process approver, say), its rules on UTC.
pub fn registry_builder(clinic: Arc<Clinic>) -> RegistryBuilder {
    registry_builder_at(clinic, 0)
}

/// [`registry_builder`] with the clinic's clock `utc_offset_minutes` from UTC (for the
/// rules' opening hours).
pub fn registry_builder_at(clinic: Arc<Clinic>, utc_offset_minutes: i32) -> RegistryBuilder {
    Registry::builder()
        .roles(ROLES)
        .shared_state(clinic)
        .filter_linked(|tool| tool.group.as_deref() == Some(tools::GROUP))
        .approver_role("admin")
        .audit_sink(toolgate::audit::TracingSink)
        .cedar(rules(utc_offset_minutes))
}

/// The clinic's rules (`clinic.cedar`), on its clock.
pub fn rules(utc_offset_minutes: i32) -> CedarPolicies {
    CedarPolicies::new()
        .text(
            "examples/src/clinic/clinic.cedar",
            include_str!("clinic.cedar"),
        )
        .claim("contractor", "Bool")
        .utc_offset_minutes(utc_offset_minutes)
}

/// The model behind `POST /chat`: any OpenAI-compatible server, from `CLINIC_MODEL_URL`
/// (default `http://127.0.0.1:8080/v1`, where `llama-server` listens), `CLINIC_MODEL`
/// (default `default`) and `CLINIC_MODEL_KEY` (optional).
pub fn model_from_env() -> OpenAiChat {
    let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let url = variable("CLINIC_MODEL_URL").unwrap_or_else(|| "http://127.0.0.1:8080/v1".into());
    let name = variable("CLINIC_MODEL").unwrap_or_else(|| "default".into());
    let model = OpenAiChat::new(url, name);
    match variable("CLINIC_MODEL_KEY") {
        Some(key) => model.api_key(key),
        None => model,
    }
}

/// The clinic's assistant: the registry's tools, as each caller may use them.
pub fn agent(registry: Registry, model: impl Model) -> Agent {
    agent_builder(registry, model).build()
}

/// [`agent`], before it is built (to keep runs in a database, say).
pub fn agent_builder(registry: Registry, model: impl Model) -> AgentBuilder {
    Agent::builder(registry, model)
        .system(
            "You are the assistant of a veterinary clinic. Use the tools to answer; when a change waits for approval, say so.",
        )
        .max_turns(8)
        .time_budget(std::time::Duration::from_secs(120))
}

/// The HTTP app: toolgate's router and chat routes, with callers from bearer tokens, and the
/// approval console at `/console`.
pub fn app(agent: Agent, clinic: Arc<Clinic>) -> Router {
    // Made once: a caller's id and role are shared, not copied, per request.
    let anonymous = Caller::new("anonymous", "public");
    let authenticate = move |parts: &Parts| -> Result<Caller, AuthError> {
        let Some(header) = parts.headers.get(AUTHORIZATION) else {
            return Ok(anonymous.clone());
        };
        let token = header
            .to_str()
            .ok()
            .and_then(|value| value.strip_prefix("Bearer "))
            .ok_or_else(|| AuthError::unauthenticated("use `Authorization: Bearer <token>`"))?;
        let user = clinic
            .user_for_token(token)
            .ok_or_else(|| AuthError::unauthenticated("unknown token"))?;
        let caller = Caller::new(user.id, user.role);
        Ok(match user.contractor {
            // What the clinic's directory says of them, for the rules.
            true => caller.with_identity("clinic", contractor_claims()),
            false => caller,
        })
    };
    agent_router(agent, authenticate, HttpOptions::default()).merge(console().router())
}

fn contractor_claims() -> serde_json::Map<String, serde_json::Value> {
    let mut claims = serde_json::Map::new();
    claims.insert("contractor".into(), serde_json::Value::Bool(true));
    claims
}

/// The approval console at `/console`: people sign in with their bearer token; a pet's
/// records are shown as a card.
pub fn console() -> Console {
    Console::new()
        .title("Clinic approvals")
        .sign_in(SignIn::BearerToken)
        .components(include_str!("console_components.js"))
}

/// Opens (creating and seeding on first run) the database and builds the app, with the
/// model of [`model_from_env`].
pub fn open_app(database: &Path) -> Result<Router, Box<dyn std::error::Error + Send + Sync>> {
    open_app_with(database, model_from_env())
}

/// [`open_app`] with another model.
pub fn open_app_with(
    database: &Path,
    model: impl Model,
) -> Result<Router, Box<dyn std::error::Error + Send + Sync>> {
    open_app_sharing(database, model, SharedState::default())
}

/// Where the clinic keeps what toolgate remembers (pending approvals, grants, budgets,
/// audit, chat runs): in memory by default, or in stores that survive restarts and that
/// several instances share.
#[derive(Debug, Clone, Default)]
pub struct SharedState {
    /// The stores; `None` keeps everything in this process's memory.
    pub stores: Option<Stores>,
    /// The key every instance signs approval tickets with (required with stores: a ticket
    /// must be redeemable on another instance, and after a restart).
    pub approval_key: Option<Vec<u8>>,
    /// How many tool calls each caller may make per minute, across all instances.
    pub calls_per_minute: Option<u32>,
    /// The clinic's clock, in minutes from UTC, for the rules' opening hours.
    pub utc_offset_minutes: i32,
    /// Where spans and metrics go, if anywhere (the server turns it on when
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` is set).
    pub telemetry: Option<toolgate::telemetry::Telemetry>,
}

/// [`open_app_with`], keeping state as `shared` says.
pub fn open_app_sharing(
    database: &Path,
    model: impl Model,
    shared: SharedState,
) -> Result<Router, Box<dyn std::error::Error + Send + Sync>> {
    let clinic = Arc::new(Clinic::open(database)?);
    let mut builder = registry_builder_at(Arc::clone(&clinic), shared.utc_offset_minutes);
    if let Some(telemetry) = shared.telemetry {
        builder = builder.telemetry(telemetry);
    }
    if let Some(limit) = shared.calls_per_minute {
        builder = builder.rate_limit_per_caller(RateLimit::new(limit, Duration::from_secs(60)));
    }
    let Some(stores) = shared.stores else {
        let registry = builder.build()?;
        return Ok(app(agent(registry, model), clinic));
    };
    let key = shared.approval_key.ok_or(
        "a shared store needs an approval key (CLINIC_APPROVAL_KEY): tickets must be \
         redeemable on every instance and after a restart",
    )?;
    let registry = builder.stores(&stores).approval_key(key).build()?;
    let agent = agent_builder(registry, model)
        .run_store(stores.runs)
        .build();
    Ok(app(agent, clinic))
}
