//! Approval by the person at the caller's own client (an MCP client's user), for calls
//! their role may decide.

use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{ApprovalAnswer, ApprovalRequest, Approver};
use crate::input::{InputRequest, InputRequired};

/// The key of the confirmation form among a call's input requests, and of the person's
/// answer among the responses.
pub const CONFIRMATION_KEY: &str = "toolgate_approval";

/// How a call that needs approval asks the person at the caller's own client
/// ([`CallOptions::ask_caller`](crate::CallOptions::ask_caller)). Used only when the
/// registry has no in-process approver of its own and the caller's role may decide the call
/// ([`Registry::may_decide`](crate::Registry::may_decide)); any other call still waits with
/// a ticket for an approver. The policy, grants, the tool's review and the audit record are
/// the same as for any approval; the record names the caller as the approver.
#[derive(Clone)]
#[non_exhaustive]
pub enum AskCaller {
    /// Ask now, while the call waits (an MCP client of the `initialize` handshake that
    /// takes elicitation requests).
    Now {
        /// Who asks, for the audit record.
        name: String,
        /// Asks the person.
        approver: Arc<dyn Approver>,
    },
    /// The client asks and makes the call again (MCP 2026-07-28): without a confirmation
    /// the call ends `input_required`, with a [`confirmation_form`] under
    /// [`CONFIRMATION_KEY`] and a single-use [`ticket`](crate::input::InputRequired::ticket);
    /// made again with that ticket and the person's answer, it runs (or is refused) once.
    /// When the approved call's tool then asks questions of its own, its `input_required`
    /// carries a new single-use ticket that lets the next round run without asking again.
    Later(Option<Confirmation>),
}

impl fmt::Debug for AskCaller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskCaller::Now { name, .. } => f.debug_struct("Now").field("name", name).finish(),
            AskCaller::Later(confirmation) => f.debug_tuple("Later").field(confirmation).finish(),
        }
    }
}

/// A person's answer to a confirmation form, with the ticket it answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    /// The ticket of the call's first round.
    pub ticket: String,
    /// The answer (`None`: not given, so the form is asked again).
    pub answer: Option<ApprovalAnswer>,
}

/// The form that asks the person whether a call may run: what, why, with which arguments
/// (secrets redacted), and what the tool says it will do.
pub fn confirmation_form(request: &ApprovalRequest) -> InputRequest {
    let tool = &request.tool;
    let name = tool.title.as_deref().unwrap_or(&tool.name);
    let mut message = format!(
        "Allow `{name}` to run? {}\nWhy you are asked: {}\nArguments: {}",
        tool.description, request.reason, request.arguments
    );
    if let Some(review) = &request.review {
        message.push_str(&format!("\nWhat it will do: {review}"));
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "approve": {"type": "boolean", "title": "Run it", "description": "Yes to run this call once, no to refuse it"},
            "reason": {"type": "string", "title": "Why not", "description": "If you refuse: why (the model reads this)"}
        },
        "required": ["approve"]
    });
    InputRequest::form(message, schema)
}

/// The `input_required` request of a call waiting for its caller's confirmation.
pub(crate) fn confirmation_required(request: &ApprovalRequest, ticket: &str) -> InputRequired {
    let mut asked = InputRequired::new().ask(CONFIRMATION_KEY, confirmation_form(request));
    asked.ticket = Some(ticket.to_owned());
    asked
}

/// The approval answer in a response to [`confirmation_form`] (an MCP `ElicitResult`): run
/// when accepted with `approve: true`; anything else refuses, with the person's reason.
pub fn answer_of(response: &Value) -> ApprovalAnswer {
    let accepted = response.get("action").and_then(Value::as_str) == Some("accept");
    let content = response.get("content");
    let approve = content
        .and_then(|content| content.get("approve"))
        .and_then(Value::as_bool);
    if accepted && approve == Some(true) {
        return ApprovalAnswer::Approve;
    }
    let reason = content
        .and_then(|content| content.get("reason"))
        .and_then(Value::as_str)
        .filter(|reason| !reason.trim().is_empty())
        .map(str::to_owned);
    let reason = reason.unwrap_or_else(|| match accepted {
        true => "the user refused it".to_owned(),
        false => "the user declined to approve it".to_owned(),
    });
    ApprovalAnswer::Deny { reason }
}
