//! What the loop needs of a model: given the conversation and the tools, its next reply.

use crate::usage::Usage;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::message::{Message, ModelCall};
use crate::definition::ToolDefinition;

/// One request to a model.
pub struct ModelRequest<'a> {
    /// The system prompt, if any.
    pub system: Option<&'a str>,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools the model may call this turn.
    pub tools: &'a [Arc<ToolDefinition>],
    /// Called with each piece of the reply as it streams, when the client streams.
    pub on_delta: Option<&'a (dyn Fn(Delta) + Send + Sync)>,
}

/// A piece of a streaming reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// More text.
    Text(String),
    /// More of a tool call: its id and name when they first appear, then pieces of its
    /// arguments' JSON text.
    ToolCall {
        /// Which call of the reply.
        index: usize,
        /// Its id, once.
        id: Option<String>,
        /// Its tool name, once.
        name: Option<String>,
        /// The next piece of the arguments.
        arguments: String,
    },
}

/// A model's reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    /// Its text, if any.
    pub text: Option<String>,
    /// The tools it called, in order.
    pub calls: Vec<ModelCall>,
    /// Tokens, as the provider reported them.
    pub usage: Usage,
    /// The reply could not be read as the model meant it (e.g. two tool-call candidates in
    /// free text): this is said to the model, which is asked again.
    pub correction: Option<String>,
    /// The model stopped at its output limit (`finish_reason` `length`, `max_tokens`,
    /// `MAX_TOKENS`, an incomplete response): the text or the last call may be cut off.
    pub cut_off: bool,
}

/// Why a model gave no reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelError {
    /// What kind of failure.
    pub kind: ModelErrorKind,
    /// What happened, for a person.
    pub message: String,
    /// The HTTP status, if the server answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The provider's error body (cut to a few kilobytes), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// The kinds of [`ModelError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The server answered with an error status (after retries, for 429 and 5xx).
    Status,
    /// Still rate limited after the retries (429).
    RateLimited,
    /// No answer in time.
    Timeout,
    /// The server could not be reached.
    Connect,
    /// The answer was not what the provider's API returns.
    Malformed,
    /// The server or the model refused the request as such (e.g. an error event in a stream).
    Provider,
}

impl ModelError {
    /// An error of `kind` with a message.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            message: message.into(),
            status: None,
            body: None,
        }
    }

    /// An answer that is not what the API returns.
    pub fn malformed(message: impl Into<String>) -> Self {
        ModelError::new(ModelErrorKind::Malformed, message)
    }
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        if let Some(body) = &self.body {
            write!(f, ": {body}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ModelError {}

/// The future of a model's reply.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelReply, ModelError>> + Send + 'a>>;

/// A language model the loop can talk to. The clients of [`models`](super::models) speak
/// the providers' APIs; implement it yourself for anything else (a test double, a local
/// library).
pub trait Model: Send + Sync + 'static {
    /// The model's next reply to the conversation.
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a>;

    /// Whose API serves the model, as the GenAI conventions name providers
    /// (`gen_ai.provider.name`: `openai`, `anthropic`, `gcp.gemini`, ...). The default is
    /// `unknown`.
    fn provider_name(&self) -> &str {
        "unknown"
    }

    /// The model asked for (`gen_ai.request.model`), if known.
    fn model_name(&self) -> Option<&str> {
        None
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        (**self).respond(request)
    }

    fn provider_name(&self) -> &str {
        (**self).provider_name()
    }

    fn model_name(&self) -> Option<&str> {
        (**self).model_name()
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        (**self).respond(request)
    }

    fn provider_name(&self) -> &str {
        (**self).provider_name()
    }

    fn model_name(&self) -> Option<&str> {
        (**self).model_name()
    }
}
