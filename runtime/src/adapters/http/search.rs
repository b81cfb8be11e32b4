//! `GET /tools/search?q=...&limit=5&format=...`: the caller's tools that best match a query.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::adapters::http::Shared;
use crate::adapters::http::errors::ApiError;
use crate::adapters::http::extract::Authenticated;
use crate::adapters::http::handlers::{format_named, malformed_query};

/// The most tools one search returns.
const MAX_LIMIT: usize = 50;

#[derive(serde::Deserialize)]
pub(crate) struct SearchQuery {
    q: Option<String>,
    limit: Option<usize>,
    format: Option<String>,
    /// `true`: only tools relevant enough to suggest (`Registry::suggest`).
    suggest: Option<bool>,
}

/// `{"hits": [{"name", "score", "relevance"}], "tools": [the hits in the format]}`.
pub(crate) async fn search(
    State(shared): State<Arc<Shared>>,
    Authenticated(caller): Authenticated,
    query: Result<Query<SearchQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(malformed_query)?;
    let format = format_named(query.format.as_deref())?;
    let Some(text) = query.q.filter(|text| !text.trim().is_empty()) else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "missing_query",
            "say what to search for: /tools/search?q=words",
        ));
    };
    let limit = query.limit.unwrap_or(5).clamp(1, MAX_LIMIT);
    let hits = match query.suggest {
        Some(true) => shared.registry.suggest(&caller, &text, limit),
        _ => shared.registry.search(&caller, &text, limit),
    };
    let scores: Vec<_> = hits
        .iter()
        .map(|hit| json!({"name": hit.definition.name, "score": hit.score, "relevance": hit.relevance}))
        .collect();
    let found: Vec<_> = hits.into_iter().map(|hit| hit.definition).collect();
    Ok(Json(json!({"hits": scores, "tools": format.tools(&found)})).into_response())
}
