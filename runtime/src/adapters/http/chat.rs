//! The agent over HTTP: `POST /chat` runs the model for the signed-in caller, and a run that
//! waits for approval goes on with `POST /chat/{run}/resume`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::adapters::http::Shared;
use crate::adapters::http::errors::ApiError;
use crate::adapters::http::extract::{Authenticated, CallerAndBody};
use crate::adapters::http::outcome::OutcomeBody;
use crate::agent::{Agent, AgentError, CallDecision, Decided, Run, RunId, RunOptions};

/// Most bytes of one chat message.
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatRequest {
    message: String,
    /// Go on with this run (a follow-up message).
    #[serde(default)]
    run_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResumeRequest {
    #[serde(default)]
    decisions: Vec<CallDecision>,
}

fn agent(shared: &Shared) -> &Agent {
    shared
        .agent
        .as_ref()
        .expect("chat routes are only mounted with an agent")
}

fn parse<T: for<'de> Deserialize<'de>>(body: &[u8], shape: &str) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            format!("the body does not have the expected shape ({error}); send {shape}"),
        )
    })
}

/// `POST /chat`: `{"message", "run_id"?}` → the run as it stopped.
pub(crate) async fn chat(
    State(shared): State<Arc<Shared>>,
    CallerAndBody(caller, body): CallerAndBody,
) -> Result<Response, ApiError> {
    let request: ChatRequest = parse(&body, r#"{"message": "...", "run_id": "..." (optional)}"#)?;
    if request.message.len() > MAX_MESSAGE_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "message_too_large",
            format!("a chat message may hold at most {MAX_MESSAGE_BYTES} bytes"),
        ));
    }
    let agent = agent(&shared);
    let run = match request.run_id {
        Some(id) => {
            let id = RunId::from(id);
            agent
                .follow_up(&caller, &id, request.message, RunOptions::default())
                .await
        }
        None => agent.run(&caller, request.message).await,
    };
    run.map(view).map_err(agent_error)
}

/// `GET /chat/{run}`: the caller's run as it stands.
pub(crate) async fn show(
    State(shared): State<Arc<Shared>>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let run = agent(&shared).get(&caller, &RunId::from(id)).await;
    run.map_err(agent_error)?
        .map(view)
        .ok_or_else(|| agent_error(AgentError::RunNotFound))
}

/// `POST /chat/{run}/resume`: from an approver, `{"decisions": [{"call_id", "decision":
/// "approve" | "deny", "reason"}]}`, answered with what came of them (never the owner's
/// conversation); from the run's owner, nothing (or its own decisions), to go on once the
/// calls are decided.
pub(crate) async fn resume(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    CallerAndBody(caller, body): CallerAndBody,
) -> Result<Response, ApiError> {
    let shape = r#"{"decisions": [{"call_id": "...", "decision": "approve"}]}"#;
    let request: ResumeRequest = parse(&body, shape)?;
    let (agent, id) = (agent(&shared), RunId::from(id));
    let owns = agent
        .get(&caller, &id)
        .await
        .map_err(agent_error)?
        .is_some();
    if owns {
        let run = agent.resume(&caller, &id, request.decisions).await;
        return run.map(view).map_err(agent_error);
    }
    let decided = agent.decide(&caller, &id, request.decisions).await;
    decided.map(decided_view).map_err(agent_error)
}

/// What an approver sees after deciding: the outcomes of the calls it decided.
fn decided_view(decided: Decided) -> Response {
    let status = if decided.still_waiting == 0 {
        "decided"
    } else {
        "needs_approval"
    };
    let outcomes: Vec<OutcomeBody> = decided.outcomes.into_iter().map(Into::into).collect();
    let body = json!({
        "run_id": decided.run_id,
        "status": status,
        "still_waiting": decided.still_waiting,
        "outcomes": outcomes,
    });
    Json(body).into_response()
}

/// What a client sees of a run: its status, answer, waiting calls, the calls made (secrets
/// redacted) and usage.
fn view(run: Run) -> Response {
    let body = json!({
        "run_id": run.id(),
        "status": run.status(),
        "text": run.text(),
        "pending": run.pending(),
        "calls": run.calls(),
        "usage": run.usage(),
        "turns": run.turns(),
    });
    Json::<Value>(body).into_response()
}

fn agent_error(error: AgentError) -> ApiError {
    let (status, code) = match &error {
        AgentError::RunNotFound => (StatusCode::NOT_FOUND, "run_not_found"),
        AgentError::NotWaiting { .. } => (StatusCode::CONFLICT, "run_not_waiting"),
        AgentError::UnknownCall { .. } => (StatusCode::BAD_REQUEST, "unknown_call"),
        AgentError::Decision { .. } => (StatusCode::CONFLICT, "decision_refused"),
        AgentError::AwaitingApproval => (StatusCode::CONFLICT, "run_awaiting_approval"),
        AgentError::Store(_) => (StatusCode::SERVICE_UNAVAILABLE, "store_unavailable"),
        _ => (StatusCode::CONFLICT, "run_conflict"),
    };
    ApiError::new(status, code, error.to_string())
}
