//! What the HTTP benches share: the clinic's router, beside a bare axum handler calling the
//! same function, and the call benches' `add` and `search` behind toolgate's router, beside
//! bare handlers of their own (served on loopback, or called in process).

// Each bench uses part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::http::request::Parts;
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate::http::{AuthError, HttpOptions};
use toolgate::{Caller, Registry};
use toolgate_examples::clinic::{Clinic, Weekday, agent, app, hours_for, model_from_env, registry};

/// The bare handler's path.
pub const BARE_PATH: &str = "/bare/hours";
/// Its body.
pub const BARE_BODY: &str = r#"{"day": "saturday"}"#;
/// The same call through toolgate's `POST /tools/call`.
pub const TOOL_BODY: &str = r#"{"name": "get_clinic_hours", "arguments": {"day": "saturday"}}"#;

#[derive(Deserialize)]
struct HoursArguments {
    day: Option<Weekday>,
}

/// What a hand-written endpoint for the same function does.
async fn bare_hours(Json(arguments): Json<HoursArguments>) -> Json<Value> {
    let day = arguments.day.unwrap_or(Weekday::Monday);
    Json(json!([{"day": day, "hours": hours_for(day)}]))
}

/// The clinic's router with the bare handler beside it.
pub fn router(database: &std::path::Path) -> axum::Router {
    let clinic = Arc::new(Clinic::open(database).unwrap());
    let registry = registry(Arc::clone(&clinic)).unwrap();
    app(agent(registry, model_from_env()), clinic).route(BARE_PATH, post(bare_hours))
}

/// Serves `router` on loopback; the base URL.
pub fn serve(runtime: &tokio::runtime::Runtime, router: axum::Router) -> String {
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        base
    })
}

/// The call benches' tools, `add` and `search`, as they measure them.
#[path = "../../../runtime/benches/common/tools.rs"]
mod tools;

use tools::{AddArguments, Found, SearchArguments, Sum, add_directly, search_directly};

async fn bare_add(Json(arguments): Json<AddArguments>) -> Json<Sum> {
    Json(add_directly(arguments.a, arguments.b))
}

async fn bare_search(Json(arguments): Json<SearchArguments>) -> Json<Found> {
    Json(search_directly(
        arguments.query,
        arguments.max,
        arguments.tags,
    ))
}

/// The call benches' two tools, `add` and `search`, in a default registry (validation and
/// history on) behind toolgate's router, every caller public; bare handlers for the same
/// functions beside it at `/bare/add` and `/bare/search`.
pub fn calls_router() -> axum::Router {
    let registry = Registry::builder()
        .roles(["public"])
        .filter_linked(|tool| ["add", "search"].contains(&tool.name.as_str()))
        .build()
        .unwrap();
    let public = Caller::new("anonymous", "public");
    let authenticate = move |_: &Parts| -> Result<Caller, AuthError> { Ok(public.clone()) };
    toolgate::http::router(registry, authenticate, HttpOptions::default())
        .route("/bare/add", post(bare_add))
        .route("/bare/search", post(bare_search))
}

/// One tool measured over HTTP: through toolgate's `POST /tools/call`, and through a bare
/// handler calling the same function.
pub struct Workload {
    /// The tool's name.
    pub name: &'static str,
    /// Whether it is served by [`calls_router`] (else by the clinic's [`router`]).
    pub on_calls_router: bool,
    /// The bare handler's path and body.
    pub bare: (&'static str, &'static str),
    /// The body posted to `/tools/call`.
    pub tool_body: &'static str,
}

impl Workload {
    /// The workload of the tool `name`, if the benches measure it.
    pub fn named(name: &str) -> Option<&'static Workload> {
        WORKLOADS.iter().find(|workload| workload.name == name)
    }

    /// The router serving this workload (the clinic's keeps its data in `database`).
    pub fn router(&self, database: &std::path::Path) -> axum::Router {
        if self.on_calls_router {
            calls_router()
        } else {
            router(database)
        }
    }

    /// The path and body of a request to `target`: `bare`, else toolgate's `/tools/call`.
    pub fn request(&self, target: &str) -> (&'static str, &'static str) {
        match target {
            "bare" => self.bare,
            _ => ("/tools/call", self.tool_body),
        }
    }
}

/// What the HTTP benches measure: the clinic's hours (behind bearer authentication and the
/// clinic's audit sink), and the call benches' `add` and `search`.
pub const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "get_clinic_hours",
        on_calls_router: false,
        bare: (BARE_PATH, BARE_BODY),
        tool_body: TOOL_BODY,
    },
    Workload {
        name: "add",
        on_calls_router: true,
        bare: ("/bare/add", tools::ADD),
        tool_body: r#"{"name": "add", "arguments": {"a": 20, "b": 22}}"#,
    },
    Workload {
        name: "search",
        on_calls_router: true,
        bare: ("/bare/search", tools::SEARCH),
        tool_body: r#"{"name": "search", "arguments": {"query": "vaccination schedule", "max": 5, "tags": ["dog", "puppy"]}}"#,
    },
];
