//! The route handlers.

use std::sync::Arc;

use axum::Json;
use axum::body::{Body, to_bytes};
use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use http_body_util::LengthLimitError;
use serde_json::{Value, json};

use crate::approval::TicketError;
use crate::bounded::{MAX_QUOTED, clip};
use crate::caller::Caller;
use crate::formats::Format;
use crate::http::Shared;
use crate::http::errors::ApiError;
use crate::http::wire::{OutcomeBody, parse_call_request};
use crate::registry::{BatchOptions, CallOptions};

type Shares = State<Arc<Shared>>;

/// Format names accepted by `GET /tools?format=`.
const FORMATS: &[(&str, Format)] = &[
    ("canonical", Format::Canonical),
    ("openai", Format::OpenAiChat { strict: false }),
    ("openai-strict", Format::OpenAiChat { strict: true }),
    (
        "openai-responses",
        Format::OpenAiResponses { strict: false },
    ),
    (
        "openai-responses-strict",
        Format::OpenAiResponses { strict: true },
    ),
    ("anthropic", Format::Anthropic { strict: false }),
    ("anthropic-strict", Format::Anthropic { strict: true }),
    ("gemini", Format::Gemini),
    ("mcp", Format::Mcp),
];

async fn caller_of(shared: &Shared, parts: &Parts) -> Result<Caller, ApiError> {
    shared.auth.authenticate(parts).await.map_err(|error| {
        let code = if error.status == StatusCode::FORBIDDEN {
            "forbidden"
        } else {
            "unauthenticated"
        };
        ApiError::new(error.status, code, error.message)
    })
}

/// A body that is not declared JSON is refused: browsers send `text/plain` and form bodies
/// across sites without asking (CSRF), never `application/json`.
fn require_json(parts: &Parts) -> Result<(), ApiError> {
    let declared = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let essence = declared
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let is_json = essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"));
    if is_json {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "send the body as JSON with `Content-Type: application/json`",
    ))
}

async fn read_body(
    shared: &Shared,
    parts: &Parts,
    body: Body,
) -> Result<axum::body::Bytes, ApiError> {
    require_json(parts)?;
    let limit = shared.options.body_limit;
    to_bytes(body, limit).await.map_err(|error| {
        let too_large =
            std::error::Error::source(&error).is_some_and(|source| source.is::<LengthLimitError>());
        if too_large {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!("the body is over the limit of {limit} bytes"),
            )
        } else {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "unreadable_body",
                format!("the body could not be read: {error}"),
            )
        }
    })
}

/// `GET /tools?format=...`
pub(crate) async fn list_tools(
    State(shared): Shares,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, _) = request.into_parts();
    let caller = caller_of(&shared, &parts).await?;
    let query = Query::<FormatQuery>::try_from_uri(&parts.uri).map_err(|error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_query",
            format!("the query could not be read: {error}"),
        )
    })?;
    let wanted = query.format.as_deref().unwrap_or("canonical");
    let Some((_, format)) = FORMATS.iter().find(|(name, _)| *name == wanted) else {
        let wanted = clip(wanted, MAX_QUOTED);
        let names: Vec<&str> = FORMATS.iter().map(|(name, _)| *name).collect();
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "unknown_format",
            format!(
                "unknown format \"{wanted}\"; use one of: {}",
                names.join(", ")
            ),
        ));
    };
    let tools = shared.registry.export(&caller, *format);
    // Serialized straight from the cached list, without copying it into a new value.
    Ok(Json(ToolsBody { tools: &tools }).into_response())
}

/// The query of `GET /tools` (percent-decoded by axum).
#[derive(serde::Deserialize)]
struct FormatQuery {
    format: Option<String>,
}

/// The body of `GET /tools`.
#[derive(serde::Serialize)]
struct ToolsBody<'a> {
    tools: &'a Value,
}

/// `POST /tools/call`
pub(crate) async fn call_tools(
    State(shared): Shares,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let caller = caller_of(&shared, &parts).await?;
    let body = read_body(&shared, &parts, body).await?;
    let request = parse_call_request(&body)?;
    let registry = &shared.registry;
    if request.single {
        let call = request
            .calls
            .into_iter()
            .next()
            .expect("a single request holds one call");
        let options = CallOptions {
            dry_run: request.dry_run,
            ..CallOptions::default()
        };
        let outcome = registry.call_with(&caller, call, options).await;
        return Ok(Json(OutcomeBody::from(outcome)).into_response());
    }
    let options = BatchOptions {
        dry_run: request.dry_run,
        ..BatchOptions::default()
    };
    let outcomes: Vec<OutcomeBody> = registry
        .run_batch_with(&caller, request.calls, options)
        .await
        .into_iter()
        .map(OutcomeBody::from)
        .collect();
    Ok(Json(json!({ "outcomes": outcomes })).into_response())
}

/// `GET /approvals`: the pending calls this caller may decide (the registry decides who).
pub(crate) async fn list_approvals(
    State(shared): Shares,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, _) = request.into_parts();
    let approver = caller_of(&shared, &parts).await?;
    let pending = shared.registry.pending_approvals(&approver);
    Ok(Json(json!({ "pending": pending })).into_response())
}

fn ticket_in(body: &[u8]) -> Result<(String, Option<String>), ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            format!("the body is not valid JSON ({error}); send {{\"ticket\": \"...\"}}"),
        )
    })?;
    let ticket = value.get("ticket").and_then(Value::as_str).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            "send {\"ticket\": \"...\"}",
        )
    })?;
    Ok((
        ticket.to_owned(),
        value
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    ))
}

fn ticket_error(error: TicketError) -> ApiError {
    let (status, code) = match error {
        TicketError::Invalid => (StatusCode::BAD_REQUEST, "invalid_ticket"),
        TicketError::Expired => (StatusCode::GONE, "ticket_expired"),
        TicketError::AlreadyUsed => (StatusCode::CONFLICT, "ticket_not_pending"),
        _ => (StatusCode::CONFLICT, "ticket_mismatch"),
    };
    ApiError::new(status, code, error.to_string())
}

/// `POST /approvals/approve`
pub(crate) async fn approve(State(shared): Shares, request: Request) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let approver = caller_of(&shared, &parts).await?;
    let (ticket, _) = ticket_in(&read_body(&shared, &parts, body).await?)?;
    let outcome = shared
        .registry
        .approve(&ticket, &approver)
        .await
        .map_err(ticket_error)?;
    Ok(Json(OutcomeBody::from(outcome)).into_response())
}

/// `POST /approvals/deny`
pub(crate) async fn deny(State(shared): Shares, request: Request) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let approver = caller_of(&shared, &parts).await?;
    let (ticket, reason) = ticket_in(&read_body(&shared, &parts, body).await?)?;
    let reason = reason.unwrap_or_else(|| "no reason given".to_owned());
    let outcome = shared
        .registry
        .deny(&ticket, &approver, &reason)
        .map_err(ticket_error)?;
    Ok(Json(OutcomeBody::from(outcome)).into_response())
}

/// `GET /health`: alive, and how many tools the caller may use (nothing about the others;
/// an unauthenticated request learns only that the service is up).
pub(crate) async fn health(State(shared): Shares, request: Request) -> Json<Value> {
    let (parts, _) = request.into_parts();
    match shared.auth.authenticate(&parts).await {
        Ok(caller) => Json(json!({
            "status": "ok",
            "tools": shared.registry.visible_to(&caller).len(),
        })),
        Err(_) => Json(json!({"status": "ok"})),
    }
}

pub(crate) async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route; see GET /tools and POST /tools/call",
    )
}

pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method",
    )
}
