//! The route handlers.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::if_in_place::IfInPlace;
use crate::adapters::http::Shared;
use crate::adapters::http::errors::ApiError;
use crate::adapters::http::extract::Authenticated;
use crate::adapters::http::outcome::{outcome_response, outcomes_response};
use crate::adapters::http::unread::after_reading;
use crate::adapters::http::wire::{Calls, parse_call_request, usual_single};
use crate::approval::TicketError;
use crate::formats::Format;
use crate::registry::Answer;
use crate::registry::{BatchOptions, CallOptions};
use crate::util::bounded::{MAX_QUOTED, clip};
use crate::{Caller, FrontEnd};

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

/// `GET /tools?format=...`
pub(crate) async fn list_tools(
    State(shared): Shares,
    Authenticated(caller): Authenticated,
    query: Result<Query<FormatQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let query = query.map_err(malformed_query)?;
    let format = format_named(query.format.as_deref())?;
    let tools = shared.registry.export(&caller, format);
    // Serialized straight from the cached list, without copying it into a new value.
    Ok(Json(ToolsBody { tools: &tools }).into_response())
}

pub(crate) fn malformed_query(error: QueryRejection) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "malformed_query",
        format!("the query could not be read: {}", error.body_text()),
    )
}

/// The format named in a query (`canonical` when none is).
pub(crate) fn format_named(wanted: Option<&str>) -> Result<Format, ApiError> {
    let wanted = wanted.unwrap_or("canonical");
    match FORMATS.iter().find(|(name, _)| *name == wanted) {
        Some((_, format)) => Ok(*format),
        None => {
            let wanted = clip(wanted, MAX_QUOTED);
            let names: Vec<&str> = FORMATS.iter().map(|(name, _)| *name).collect();
            Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "unknown_format",
                format!(
                    "unknown format \"{wanted}\"; use one of: {}",
                    names.join(", ")
                ),
            ))
        }
    }
}

/// The query of `GET /tools` (percent-decoded by axum).
#[derive(serde::Deserialize)]
pub(crate) struct FormatQuery {
    format: Option<String>,
}

/// The body of `GET /tools`.
#[derive(serde::Serialize)]
struct ToolsBody<'a> {
    tools: &'a Value,
}

/// `POST /tools/call`
pub(crate) async fn call_tools(
    shared: Arc<Shared>,
    caller: Caller,
    body: Bytes,
) -> Result<Response, ApiError> {
    let registry = &shared.registry;
    // The usual single call, its arguments read once, straight from the body, where its
    // tool runs in place; any other is read the usual way.
    if let Some(call) = usual_single(&body)
        && let IfInPlace(Some(answer)) = registry
            .call_ending::<IfInPlace>(&caller, call, FrontEnd::Http)
            .await
    {
        return Ok(outcome_response(answer));
    }
    let request = parse_call_request(&body)?;
    let calls = match request.calls {
        Calls::One(call) => {
            let outcome: Answer = if request.dry_run {
                let options = CallOptions {
                    dry_run: true,
                    front: FrontEnd::Http,
                    ..CallOptions::default()
                };
                registry.call_with(&caller, call, options).await.into()
            } else {
                // Without options to take apart; a result that can be is given as its text.
                registry
                    .call_ending::<Answer>(&caller, call, FrontEnd::Http)
                    .await
            };
            return Ok(outcome_response(outcome));
        }
        Calls::Batch(calls) => calls,
    };
    let options = BatchOptions {
        dry_run: request.dry_run,
        front: FrontEnd::Http,
        ..BatchOptions::default()
    };
    // Boxed: a batch's future is large, and would make every single call's larger.
    let outcomes = Box::pin(registry.run_batch_with(&caller, calls, options)).await;
    Ok(outcomes_response(outcomes))
}

/// `GET /approvals`: the pending calls this caller may decide (the registry decides who).
pub(crate) async fn list_approvals(
    State(shared): Shares,
    Authenticated(approver): Authenticated,
) -> Result<Response, ApiError> {
    let pending = shared.registry.pending_approvals(&approver).await;
    let pending = pending.map_err(|error| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            error.to_string(),
        )
    })?;
    let pending: Vec<Value> = pending
        .into_iter()
        .map(|call| with_tool_facts(&shared.registry, &approver, call))
        .collect();
    Ok(Json(json!({ "pending": pending })).into_response())
}

/// A waiting call as a person deciding it needs it: with the tool's title and risk (the
/// approver may see the tool: it may decide only tools at or below its own role).
fn with_tool_facts(
    registry: &crate::Registry,
    approver: &crate::Caller,
    call: crate::approval::PendingCall,
) -> Value {
    let definition = registry.definition(approver, &call.tool);
    let mut value = serde_json::to_value(&call).unwrap_or_default();
    if let (Some(definition), Some(object)) = (definition, value.as_object_mut()) {
        object.insert("title".into(), json!(definition.title));
        object.insert("risk".into(), json!(definition.risk));
        object.insert("description".into(), json!(definition.description));
    }
    value
}

/// `GET /me`: who the caller is, as the application's authentication said.
pub(crate) async fn me(State(shared): Shares, Authenticated(caller): Authenticated) -> Json<Value> {
    Json(json!({
        "id": caller.id(),
        "role": caller.role(),
        "approver": shared.registry.is_approver(&caller),
    }))
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
        TicketError::StoreUnavailable => (StatusCode::SERVICE_UNAVAILABLE, "store_unavailable"),
        _ => (StatusCode::CONFLICT, "ticket_mismatch"),
    };
    ApiError::new(status, code, error.to_string())
}

/// `POST /approvals/approve`
pub(crate) async fn approve(
    shared: Arc<Shared>,
    approver: Caller,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (ticket, _) = ticket_in(&body)?;
    let outcome = shared
        .registry
        .approve(&ticket, &approver)
        .await
        .map_err(ticket_error)?;
    Ok(outcome_response(outcome))
}

/// `POST /approvals/deny`
pub(crate) async fn deny(
    shared: Arc<Shared>,
    approver: Caller,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (ticket, reason) = ticket_in(&body)?;
    let reason = reason.unwrap_or_else(|| "no reason given".to_owned());
    let outcome = shared
        .registry
        .deny(&ticket, &approver, &reason)
        .await
        .map_err(ticket_error)?;
    Ok(outcome_response(outcome))
}

/// `GET /health`: alive, and how many tools the caller may use (nothing about the others;
/// an unauthenticated request learns only that the service is up).
pub(crate) async fn health(
    State(shared): Shares,
    caller: Result<Authenticated, axum::response::Response>,
) -> Json<Value> {
    match caller {
        Ok(Authenticated(caller)) => Json(json!({
            "status": "ok",
            "tools": shared.registry.visible_to(&caller).len(),
        })),
        Err(_) => Json(json!({"status": "ok"})),
    }
}

/// No route here: said once the request's body is read (see `unread`).
pub(crate) async fn not_found(request: axum::extract::Request) -> Response {
    let answer = ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route; see GET /tools and POST /tools/call",
    );
    after_reading(request.into_body(), answer.into_response()).await
}

/// The route takes other methods: said once the request's body is read.
pub(crate) async fn method_not_allowed(request: axum::extract::Request) -> Response {
    let answer = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method",
    );
    after_reading(request.into_body(), answer.into_response()).await
}
