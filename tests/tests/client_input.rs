//! Tools that ask the client (`toolgate::input`), and approval by the person at the
//! caller's own client (`AskCaller`), at the registry: what MCP builds on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolgate::approval::{
    ApprovalAnswer, ApprovalRequest, AskCaller, CONFIRMATION_KEY, Confirmation,
};
use toolgate::input::{ClientInput, Input, InputKind, InputRequest, InputRequired};
use toolgate::prelude::*;

/// Greets the person by name, asking for it.
#[tool(permission = "public", read_only)]
fn greet(#[ctx] input: Input) -> Result<String, ToolError> {
    match input.accepted("name") {
        Some(form) => Ok(format!("Hello, {}!", form["name"].as_str().unwrap_or("?"))),
        None if input.can(InputKind::Elicitation) => Err(InputRequired::new()
            .ask(
                "name",
                InputRequest::form("Your name?", json!({"type": "object"})),
            )
            .state(json!({"round": 1}))
            .into()),
        None => Ok("Hello!".into()),
    }
}

/// Empties a bin: destructive, so it needs approval; asks which bin first.
#[tool(permission = "staff", destructive)]
fn empty_bin(
    /// The room.
    room: String,
    #[ctx] input: Input,
) -> Result<String, ToolError> {
    match input.accepted("bin") {
        Some(form) => Ok(format!("emptied {} in {room}", form["bin"])),
        None => Err(InputRequired::new()
            .ask(
                "bin",
                InputRequest::form("Which bin?", json!({"type": "object"})),
            )
            .into()),
    }
}

/// Shreds a file: destructive, needs approval.
#[tool(permission = "staff", destructive)]
fn shred(
    /// The file.
    file: String,
) -> String {
    format!("shredded {file}")
}

fn registry() -> Registry {
    Registry::builder()
        .roles(["public", "staff", "admin"])
        .approver_role("staff")
        .filter_linked(|tool| ["greet", "empty_bin", "shred"].contains(&tool.name.as_str()))
        .build()
        .unwrap()
}

fn can_elicit() -> ClientInput {
    ClientInput {
        can: vec![InputKind::Elicitation],
        ..ClientInput::default()
    }
}

async fn call(
    registry: &Registry,
    caller: &Caller,
    name: &str,
    arguments: Value,
    input: ClientInput,
    ask_caller: Option<AskCaller>,
) -> ToolOutcome {
    let options = CallOptions {
        input: Some(input),
        ask_caller,
        ..CallOptions::default()
    };
    registry
        .call_with(caller, ToolCall::new("c1", name, arguments), options)
        .await
}

/// A client that makes the call again with the person's answer (MCP 2026-07-28).
fn ask_later() -> Option<AskCaller> {
    Some(AskCaller::Later(None))
}

/// The call made again with the answer to the form of `ticket`.
fn answering(ticket: String, answer: Option<ApprovalAnswer>) -> Option<AskCaller> {
    Some(AskCaller::Later(Some(Confirmation { ticket, answer })))
}

fn asked(outcome: &ToolOutcome) -> InputRequired {
    let error = outcome.error().expect("an error");
    assert_eq!(error.code, ErrorCode::InputRequired, "{error:?}");
    InputRequired::from_error(error).expect("input_required carries its request")
}

#[tokio::test]
async fn a_tool_asks_and_reads_the_answers() {
    let registry = registry();
    let caller = Caller::new("p", "public");
    // No client that can answer: the tool does without.
    let plain = registry
        .call(&caller, ToolCall::new("c1", "greet", "{}"))
        .await;
    assert_eq!(plain.result.unwrap(), "Hello!");
    // A client that takes forms: asked, with the tool's state.
    let first = call(&registry, &caller, "greet", json!({}), can_elicit(), None).await;
    let request = asked(&first);
    assert_eq!(request.requests["name"].method, "elicitation/create");
    assert_eq!(request.state, Some(json!({"round": 1})));
    assert!(request.ticket.is_none());
    // Called again with the answer.
    let mut answers = can_elicit();
    answers.responses.insert(
        "name".into(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    );
    let second = call(
        &registry,
        &caller,
        "greet",
        json!({}),
        answers.clone(),
        None,
    )
    .await;
    assert_eq!(second.result.unwrap(), "Hello, Ada!");
    // A declined form is no answer.
    answers
        .responses
        .insert("name".into(), json!({"action": "decline"}));
    let declined = call(&registry, &caller, "greet", json!({}), answers, None).await;
    asked(&declined);
}

#[tokio::test]
async fn the_caller_confirms_once_for_these_arguments() {
    let registry = registry();
    let staff = Caller::new("sam", "staff");
    let arguments = json!({"file": "minutes.txt"});
    let first = call(
        &registry,
        &staff,
        "shred",
        arguments.clone(),
        can_elicit(),
        ask_later(),
    )
    .await;
    let request = asked(&first);
    let form = &request.requests[CONFIRMATION_KEY];
    assert_eq!(form.method, "elicitation/create");
    assert!(
        form.params["message"]
            .as_str()
            .unwrap()
            .contains("minutes.txt")
    );
    let ticket = request.ticket.clone().expect("a ticket");
    // Waiting for its caller, not for an approver: nobody else lists or redeems it.
    let approver = Caller::new("ann", "admin");
    assert!(
        registry
            .pending_approvals(&approver)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(registry.approve(&ticket, &approver).await.is_err());

    // No answer yet: the same form, the same ticket.
    let again = call(
        &registry,
        &staff,
        "shred",
        arguments.clone(),
        can_elicit(),
        answering(ticket.clone(), None),
    )
    .await;
    assert_eq!(asked(&again).ticket.as_deref(), Some(ticket.as_str()));
    // Other arguments, or another caller, with this ticket: refused, nothing taken.
    let other = call(
        &registry,
        &staff,
        "shred",
        json!({"file": "budget.xlsx"}),
        can_elicit(),
        answering(ticket.clone(), Some(ApprovalAnswer::Approve)),
    )
    .await;
    assert_eq!(other.error().unwrap().code, ErrorCode::ApprovalDenied);
    let someone = Caller::new("sue", "staff");
    let stolen = call(
        &registry,
        &someone,
        "shred",
        arguments.clone(),
        can_elicit(),
        answering(ticket.clone(), Some(ApprovalAnswer::Approve)),
    )
    .await;
    assert_eq!(stolen.error().unwrap().code, ErrorCode::ApprovalDenied);
    // A changed ticket is not one.
    let mut forged = ticket.clone();
    forged.insert(3, 'x');
    let forged_call = call(
        &registry,
        &staff,
        "shred",
        arguments.clone(),
        can_elicit(),
        answering(forged, Some(ApprovalAnswer::Approve)),
    )
    .await;
    assert_eq!(forged_call.error().unwrap().code, ErrorCode::ApprovalDenied);
    // The answer: runs once.
    let approved = call(
        &registry,
        &staff,
        "shred",
        arguments.clone(),
        can_elicit(),
        answering(ticket.clone(), Some(ApprovalAnswer::Approve)),
    )
    .await;
    assert_eq!(approved.result.unwrap(), "shredded minutes.txt");
    let replayed = call(
        &registry,
        &staff,
        "shred",
        arguments,
        can_elicit(),
        answering(ticket.clone(), Some(ApprovalAnswer::Approve)),
    )
    .await;
    let error = replayed.error().unwrap();
    assert_eq!(error.code, ErrorCode::ApprovalDenied);
    assert!(error.message.contains("not accepted"), "{}", error.message);
}

#[tokio::test]
async fn a_refusal_carries_the_reason_and_runs_nothing() {
    let registry = registry();
    let staff = Caller::new("sam", "staff");
    let arguments = json!({"file": "a.txt"});
    let first = call(
        &registry,
        &staff,
        "shred",
        arguments.clone(),
        can_elicit(),
        ask_later(),
    )
    .await;
    let ticket = asked(&first).ticket.unwrap();
    let deny = ApprovalAnswer::Deny {
        reason: "keep it".into(),
    };
    let refused = call(
        &registry,
        &staff,
        "shred",
        arguments,
        can_elicit(),
        answering(ticket, Some(deny)),
    )
    .await;
    let error = refused.error().unwrap();
    assert_eq!(error.code, ErrorCode::ApprovalDenied);
    assert!(error.message.contains("keep it"));
}

#[tokio::test]
async fn only_a_caller_who_may_decide_is_asked() {
    let registry = Registry::builder()
        .roles(["public", "staff", "admin"])
        .filter_linked(|tool| tool.name == "shred")
        .build()
        .unwrap();
    // Admins approve by default: a staff member's call waits with a ticket.
    let staff = Caller::new("sam", "staff");
    let asked_now = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked_now);
    let now = AskCaller::Now {
        name: "sam's client".into(),
        approver: Arc::new(move |_: ApprovalRequest| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { ApprovalAnswer::Approve }
        }),
    };
    let outcome = call(
        &registry,
        &staff,
        "shred",
        json!({"file": "a"}),
        can_elicit(),
        Some(now.clone()),
    )
    .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::ApprovalRequired);
    assert_eq!(asked_now.load(Ordering::SeqCst), 0);
    // An admin is asked, while the call waits.
    let admin = Caller::new("ann", "admin");
    let outcome = call(
        &registry,
        &admin,
        "shred",
        json!({"file": "a"}),
        can_elicit(),
        Some(now),
    )
    .await;
    assert_eq!(outcome.result.unwrap(), "shredded a");
    assert_eq!(asked_now.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_approved_call_whose_tool_asks_is_not_asked_again() {
    let registry = registry();
    let staff = Caller::new("sam", "staff");
    let arguments = json!({"room": "lab"});
    let first = call(
        &registry,
        &staff,
        "empty_bin",
        arguments.clone(),
        can_elicit(),
        ask_later(),
    )
    .await;
    let ticket = asked(&first).ticket.unwrap();
    // Approved: the tool runs and asks its own question, with a new ticket for the next round.
    let second = call(
        &registry,
        &staff,
        "empty_bin",
        arguments.clone(),
        can_elicit(),
        answering(ticket.clone(), Some(ApprovalAnswer::Approve)),
    )
    .await;
    let question = asked(&second);
    assert!(question.requests.contains_key("bin"));
    let carried = question.ticket.expect("the approval is carried");
    assert_ne!(carried, ticket);
    let mut answers = can_elicit();
    answers.responses.insert(
        "bin".into(),
        json!({"action": "accept", "content": {"bin": "blue"}}),
    );
    let third = call(
        &registry,
        &staff,
        "empty_bin",
        arguments.clone(),
        answers.clone(),
        answering(carried.clone(), Some(ApprovalAnswer::Approve)),
    )
    .await;
    assert_eq!(third.result.unwrap(), "emptied \"blue\" in lab");
    // The carried ticket was single-use too.
    let replayed = call(
        &registry,
        &staff,
        "empty_bin",
        arguments,
        answers,
        answering(carried, Some(ApprovalAnswer::Approve)),
    )
    .await;
    assert_eq!(replayed.error().unwrap().code, ErrorCode::ApprovalDenied);
}
