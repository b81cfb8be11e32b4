//! Tools that ask the person at the client while they run: a form to fill in
//! (elicitation), a model's answer (sampling), or the client's roots.
//!
//! A tool takes `#[ctx] input: Input`. When an answer it needs is not there yet, it returns
//! [`InputRequired`] (as its error) naming what to ask; the client asks, and the call is
//! made again with the answers, which the tool reads with [`Input::response`] and friends.
//! State the tool keeps between the rounds goes with the request ([`InputRequired::state`],
//! [`Input::state`]), signed by the registry so a client cannot change it.
//!
//! Over MCP this is protocol 2026-07-28's `InputRequiredResult` (the client retries the call
//! with `inputResponses` and the echoed, signed `requestState`); for clients of the
//! `initialize` handshake the server asks them itself (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) and runs the tool again with the answers.
//! Elsewhere (HTTP, an agent) a call that needs input fails with `input_required`, which
//! says what was wanted.
//!
//! ```rust,standalone_crate
//! use serde_json::json;
//! use toolgate::input::{Input, InputKind, InputRequest, InputRequired};
//! use toolgate::prelude::*;
//!
//! /// Greet the user by name, asking for it.
//! #[tool(permission = "public")]
//! fn greet(#[ctx] input: Input) -> Result<String, ToolError> {
//!     if let Some(answer) = input.accepted("name") {
//!         return Ok(format!("Hello, {}!", answer["name"].as_str().unwrap_or("you")));
//!     }
//!     if !input.can(InputKind::Elicitation) {
//!         return Ok("Hello!".into());
//!     }
//!     let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
//!     Err(InputRequired::new().ask("name", InputRequest::form("What is your name?", schema)).into())
//! }
//! # fn main() {}
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};

/// What a client can be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A form for the person (`elicitation/create`).
    Elicitation,
    /// A completion of the client's model (`sampling/createMessage`).
    Sampling,
    /// The client's roots (`roots/list`).
    Roots,
}

impl InputKind {
    /// The MCP method that asks it.
    pub fn method(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }

    /// The kind an MCP method asks, if it is one.
    pub fn of_method(method: &str) -> Option<Self> {
        [
            InputKind::Elicitation,
            InputKind::Sampling,
            InputKind::Roots,
        ]
        .into_iter()
        .find(|kind| kind.method() == method)
    }
}

/// One question to the client: an MCP request (`method` and `params`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// The request's parameters.
    pub params: Value,
}

impl InputRequest {
    /// A form for the person: a message and the JSON Schema of the answer (an object of
    /// plain properties, as MCP elicitation allows).
    pub fn form(message: impl Into<String>, schema: Value) -> Self {
        InputRequest {
            method: InputKind::Elicitation.method().to_owned(),
            params: json!({"message": message.into(), "requestedSchema": schema}),
        }
    }

    /// A question for the client's model, answered in at most `max_tokens` tokens.
    pub fn sample(prompt: impl Into<String>, max_tokens: u32) -> Self {
        let message = json!({"role": "user", "content": {"type": "text", "text": prompt.into()}});
        InputRequest::sampling(json!({"messages": [message], "maxTokens": max_tokens}))
    }

    /// A sampling request with all of MCP's parameters (`messages`, `maxTokens`,
    /// `systemPrompt`, `modelPreferences`, ...).
    pub fn sampling(params: Value) -> Self {
        InputRequest {
            method: InputKind::Sampling.method().to_owned(),
            params,
        }
    }

    /// The client's roots.
    pub fn roots() -> Self {
        InputRequest {
            method: InputKind::Roots.method().to_owned(),
            params: json!({}),
        }
    }

    /// What it asks, if it is a request a client can be asked.
    pub fn kind(&self) -> Option<InputKind> {
        InputKind::of_method(&self.method)
    }
}

/// What a tool returns (as its error) to ask the client: questions by key, and the tool's
/// own state for the next round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputRequired {
    /// The questions, by the key their answers come back under.
    #[serde(rename = "inputRequests")]
    pub requests: BTreeMap<String, InputRequest>,
    /// The tool's state, handed back by [`Input::state`] in the next round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// The single-use approval ticket the next round needs (set by the registry for a call
    /// that waits for its caller's confirmation, or that its caller approved; see
    /// [`AskCaller::Later`](crate::approval::AskCaller::Later)). Tools leave it alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
}

impl InputRequired {
    /// Nothing asked yet.
    pub fn new() -> Self {
        InputRequired::default()
    }

    /// Asks `request`; its answer comes back under `key`.
    pub fn ask(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.requests.insert(key.into(), request);
        self
    }

    /// State to have back in the next round (signed, so the client cannot change it; not
    /// encrypted, so no secrets).
    pub fn state(mut self, state: impl Serialize) -> Self {
        self.state = serde_json::to_value(state).ok();
        self
    }

    /// The request of an `input_required` error, if that is what `error` is.
    pub fn from_error(error: &ToolError) -> Option<Self> {
        if error.code != ErrorCode::InputRequired {
            return None;
        }
        serde_json::from_value(error.details.clone()?).ok()
    }
}

impl From<InputRequired> for ToolError {
    fn from(request: InputRequired) -> Self {
        let keys: Vec<&str> = request.requests.keys().map(String::as_str).collect();
        let message = format!(
            "this call needs answers from the user ({}) that only an MCP client can give; it has not finished",
            keys.join(", ")
        );
        let details = serde_json::to_value(&request).unwrap_or(Value::Null);
        ToolError::new(ErrorCode::InputRequired, message).with_details(details)
    }
}

/// What the client brings to a call: its answers, the tool's state from the round before,
/// and what it can be asked ([`CallOptions::input`](crate::CallOptions::input)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientInput {
    /// Answers by key.
    pub responses: Map<String, Value>,
    /// The tool's state from the round before.
    pub state: Option<Value>,
    /// What the client said it can be asked.
    pub can: Vec<InputKind>,
}

/// A tool's view of the client's answers (`#[ctx] input: Input`); empty where no client
/// can answer.
#[derive(Debug, Clone, Default)]
pub struct Input(pub(crate) Option<Arc<ClientInput>>);

impl Input {
    /// The answer under `key`, as the client sent it (an elicitation's
    /// `{"action", "content"}`, a sampling's message, a `{"roots": [...]}`).
    pub fn response(&self, key: &str) -> Option<&Value> {
        self.0.as_ref()?.responses.get(key)
    }

    /// The form the person filled in under `key`, when they accepted (not declined or
    /// cancelled).
    pub fn accepted(&self, key: &str) -> Option<&Map<String, Value>> {
        let answer = self.response(key)?;
        if answer.get("action").and_then(Value::as_str) != Some("accept") {
            return None;
        }
        answer.get("content")?.as_object()
    }

    /// The text the client's model answered under `key`.
    pub fn sampled_text(&self, key: &str) -> Option<&str> {
        let content = self.response(key)?.get("content")?;
        let first = content
            .as_array()
            .and_then(|all| all.first())
            .unwrap_or(content);
        first.get("text")?.as_str()
    }

    /// The state the tool kept from the round before.
    pub fn state(&self) -> Option<&Value> {
        self.0.as_ref()?.state.as_ref()
    }

    /// Whether the client can be asked this.
    pub fn can(&self, kind: InputKind) -> bool {
        self.0
            .as_ref()
            .is_some_and(|input| input.can.contains(&kind))
    }
}
