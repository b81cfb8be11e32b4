//! A tool's questions to the client (see [`crate::input`]) over MCP: as an
//! `InputRequiredResult` with a signed `requestState` for protocol 2026-07-28 clients, who
//! make the call again with the answers; asked by the server itself, round after round, for
//! clients of the `initialize` handshake.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{ClientCapabilities, ErrorData, InputRequiredResult, ServerRequest};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::approval::{
    ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver, CONFIRMATION_KEY, TicketSigner,
    answer_of, confirmation_form,
};
use crate::caller::Caller;
use crate::input::{ClientInput, InputKind, InputRequest, InputRequired};
use crate::util::time::now_secs;

/// Rounds of questions one call may take with an `initialize` client before it fails.
pub(super) const MAX_ROUNDS: usize = 10;

/// What the client can be asked, from its declared capabilities.
pub(super) fn capabilities(context: &RequestContext<RoleServer>) -> Vec<InputKind> {
    let Some(declared) = context.client_capabilities() else {
        return Vec::new();
    };
    kinds_of(&declared)
}

fn kinds_of(declared: &ClientCapabilities) -> Vec<InputKind> {
    let mut kinds = Vec::new();
    if declared.elicitation.is_some() {
        kinds.push(InputKind::Elicitation);
    }
    if declared.sampling.is_some() {
        kinds.push(InputKind::Sampling);
    }
    if declared.roots.is_some() {
        kinds.push(InputKind::Roots);
    }
    kinds
}

/// Whether the request is of protocol 2026-07-28 or later: no server-to-client requests,
/// questions go back in the result. A client that never made the `initialize` handshake
/// is one, whatever its request says.
pub(super) fn stateless(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .meta
        .protocol_version()
        .is_some_and(|version| !version.has_initialize());
    modern || context.peer.peer_info().is_none()
}

/// What a `requestState` says, signed with the registry's key: the call it belongs to, the
/// questions asked (to check the answers), and the tool's own state.
#[derive(Serialize, Deserialize)]
struct RequestState {
    caller: String,
    tool: String,
    /// Keyed digest of the arguments.
    arguments: String,
    expires: u64,
    requests: BTreeMap<String, InputRequest>,
    state: Option<Value>,
    /// The call's single-use approval ticket for the next round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket: Option<String>,
}

/// The approval a call made again brings.
pub(super) enum Approval {
    /// The person was asked the approval form; the ticket it answers.
    Asked(String),
    /// The person approved in a round before; the ticket that carries it.
    Carried(String),
}

/// The call this round is for.
pub(super) struct ThisCall<'a> {
    pub(super) signer: &'a TicketSigner,
    pub(super) caller: &'a Caller,
    pub(super) tool: &'a str,
    pub(super) arguments: &'a Value,
}

/// The `InputRequiredResult` of a tool's questions, every one of a kind the client
/// declared (else the error MCP names for a missing capability).
pub(super) fn input_required_result(
    call: &ThisCall<'_>,
    asked: InputRequired,
    can: &[InputKind],
) -> Result<InputRequiredResult, ErrorData> {
    check_capabilities(&asked, can)?;
    let requests: rmcp::model::InputRequests = asked
        .requests
        .iter()
        .map(|(key, request)| Ok((key.clone(), rmcp_request(request)?)))
        .collect::<Result<_, ErrorData>>()?;
    let state = RequestState {
        caller: call.caller.id().to_owned(),
        tool: call.tool.to_owned(),
        arguments: call.signer.arguments_digest(call.arguments),
        expires: now_secs() + call.signer.lifetime().as_secs(),
        requests: asked.requests,
        state: asked.state,
        ticket: asked.ticket,
    };
    let sealed = call.signer.seal(&state);
    Ok(InputRequiredResult::new(Some(requests), Some(sealed)))
}

/// Every question of a kind the client declared, else MCP's missing-capability error
/// (`-32021`, naming what is missing).
pub(super) fn check_capabilities(
    asked: &InputRequired,
    can: &[InputKind],
) -> Result<(), ErrorData> {
    let mut missing = Map::new();
    for request in asked.requests.values() {
        match request.kind() {
            Some(kind) if can.contains(&kind) => {}
            Some(kind) => {
                let name = match kind {
                    InputKind::Elicitation => "elicitation",
                    InputKind::Sampling => "sampling",
                    InputKind::Roots => "roots",
                };
                missing.insert(name.to_owned(), json!({}));
            }
            None => {
                return Err(ErrorData::internal_error(
                    format!(
                        "the tool asked the client `{}`, which is not something a client can be asked",
                        request.method
                    ),
                    None,
                ));
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let required: ClientCapabilities = serde_json::from_value(Value::Object(missing))
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Err(ErrorData::missing_required_client_capability(required))
}

fn rmcp_request(request: &InputRequest) -> Result<rmcp::model::InputRequest, ErrorData> {
    let wire = json!({"method": request.method, "params": request.params});
    serde_json::from_value(wire).map_err(|error| {
        ErrorData::internal_error(
            format!(
                "the tool's `{}` request is not valid: {error}",
                request.method
            ),
            None,
        )
    })
}

/// The answers of a call made again: its `requestState` opened and checked (this caller,
/// this tool, these arguments, not expired), each form answer checked against the schema it
/// was asked with. A changed state, or one of another call, runs nothing.
pub(super) fn answers(
    call: &ThisCall<'_>,
    request_state: &str,
    responses: Map<String, Value>,
    can: Vec<InputKind>,
) -> Result<(ClientInput, Option<Approval>), ErrorData> {
    let invalid =
        |why: &str| ErrorData::invalid_params(format!("invalid requestState: {why}"), None);
    let state: RequestState = call
        .signer
        .open(request_state)
        .map_err(|_| invalid("it was not issued by this server, or it was changed"))?;
    if state.expires <= now_secs() {
        return Err(invalid("it has expired; make the call again without it"));
    }
    let same_call = state.caller == call.caller.id()
        && state.tool == call.tool
        && state.arguments == call.signer.arguments_digest(call.arguments);
    if !same_call {
        return Err(invalid(
            "it belongs to another call (caller, tool or arguments differ)",
        ));
    }
    let mut kept = Map::new();
    for (key, response) in responses {
        // Answers to questions that were not asked are ignored.
        let Some(request) = state.requests.get(&key) else {
            continue;
        };
        check_answer(&key, request, &response)?;
        kept.insert(key, response);
    }
    let approval = state.ticket.map(
        |ticket| match state.requests.contains_key(CONFIRMATION_KEY) {
            true => Approval::Asked(ticket),
            false => Approval::Carried(ticket),
        },
    );
    let input = ClientInput {
        responses: kept,
        state: state.state,
        can,
    };
    Ok((input, approval))
}

/// A form's accepted content must match the schema it was asked with.
fn check_answer(key: &str, request: &InputRequest, response: &Value) -> Result<(), ErrorData> {
    if request.kind() != Some(InputKind::Elicitation)
        || response.get("action").and_then(Value::as_str) != Some("accept")
    {
        return Ok(());
    }
    let Some(schema) = request.params.get("requestedSchema") else {
        return Ok(());
    };
    let content = response.get("content").cloned().unwrap_or(json!({}));
    let valid = jsonschema::validator_for(schema)
        .map(|validator| validator.is_valid(&content))
        .unwrap_or(false);
    if valid {
        Ok(())
    } else {
        Err(ErrorData::invalid_params(
            format!("the answer `{key}` does not match the form it answers"),
            None,
        ))
    }
}

/// Asks an `initialize` client each question itself; the answers by key.
pub(super) async fn ask_now(
    peer: &Peer<RoleServer>,
    asked: &InputRequired,
) -> Result<Map<String, Value>, String> {
    let mut answers = Map::new();
    for (key, request) in &asked.requests {
        let wire = json!({"method": request.method, "params": request.params});
        let request: ServerRequest = serde_json::from_value(wire)
            .map_err(|error| format!("the `{}` request is not valid: {error}", request.method))?;
        let answer = peer
            .send_request(request)
            .await
            .map_err(|error| format!("the client did not answer `{key}`: {error}"))?;
        let answer = serde_json::to_value(answer).map_err(|error| error.to_string())?;
        answers.insert(key.clone(), answer);
    }
    Ok(answers)
}

/// Asks an `initialize` client's person whether a call may run, by elicitation. Made for
/// one call: once the person approved it, the call's later rounds (when its tool asks more
/// questions) are not asked again.
#[derive(Clone)]
pub(super) struct ClientApprover(Arc<AskingPerson>);

struct AskingPerson {
    peer: Peer<RoleServer>,
    approved: AtomicBool,
}

impl ClientApprover {
    pub(super) fn new(peer: Peer<RoleServer>) -> Self {
        ClientApprover(Arc::new(AskingPerson {
            peer,
            approved: AtomicBool::new(false),
        }))
    }
}

impl Approver for ClientApprover {
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture {
        let person = Arc::clone(&self.0);
        Box::pin(async move {
            if person.approved.load(Ordering::SeqCst) {
                return ApprovalAnswer::Approve;
            }
            let asked = InputRequired::new().ask(CONFIRMATION_KEY, confirmation_form(&request));
            let answer = match ask_now(&person.peer, &asked).await {
                Ok(answers) => answers.get(CONFIRMATION_KEY).map(answer_of),
                Err(error) => Some(ApprovalAnswer::Deny {
                    reason: format!("the approval could not be asked for: {error}"),
                }),
            };
            let answer = answer.unwrap_or(ApprovalAnswer::Deny {
                reason: "the client gave no answer".into(),
            });
            if answer == ApprovalAnswer::Approve {
                person.approved.store(true, Ordering::SeqCst);
            }
            answer
        })
    }
}
