//! `GET /usage?days=7` (or `?since=MS&until=MS`): what the tools were used for, for
//! approvers, counting only the tools the approver may see.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::adapters::http::Shared;
use crate::adapters::http::errors::ApiError;
use crate::adapters::http::extract::Authenticated;
use crate::adapters::http::handlers::malformed_query;

/// The longest period one request counts.
const MOST_DAYS: u64 = 366;
const DAY_MS: u64 = 24 * 60 * 60 * 1000;

#[derive(serde::Deserialize)]
pub(crate) struct UsageQuery {
    days: Option<u64>,
    since: Option<u64>,
    until: Option<u64>,
}

/// The [`UsageReport`](crate::audit::UsageReport) of the period as JSON.
pub(crate) async fn usage(
    State(shared): State<Arc<Shared>>,
    Authenticated(viewer): Authenticated,
    query: Result<Query<UsageQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(malformed_query)?;
    if !shared.registry.is_approver(&viewer) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "not_an_approver",
            "usage figures are for approvers",
        ));
    }
    let until = query.until.unwrap_or_else(crate::util::time::now_millis);
    let days = query.days.unwrap_or(7).clamp(1, MOST_DAYS);
    let since = query.since.unwrap_or(until.saturating_sub(days * DAY_MS));
    if since >= until {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_query",
            "`since` comes before `until` (milliseconds since the Unix epoch)",
        ));
    }
    let report = shared
        .registry
        .usage(&viewer, since, until)
        .await
        .map_err(|error| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                error.to_string(),
            )
        })?;
    Ok(Json(report).into_response())
}
