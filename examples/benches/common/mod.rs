//! What the HTTP benches share: the clinic's router, beside a bare axum handler calling the
//! same function (served on loopback, or called in process).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Value, json};
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

/// Serves the clinic and the bare handler on loopback; the base URL.
#[allow(dead_code)] // Not every bench serves over sockets.
pub fn start(runtime: &tokio::runtime::Runtime, database: &std::path::Path) -> String {
    let router = router(database);
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        base
    })
}
