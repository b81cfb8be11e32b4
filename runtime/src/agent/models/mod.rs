//! Clients of the providers' APIs (feature `models`), each writing the conversation and the
//! tools through [`formats`](crate::formats) and reading the calls back the same way.
//!
//! | client | API | streaming |
//! |---|---|---|
//! | [`OpenAiChat`] | Chat Completions: OpenAI, llama.cpp's `llama-server`, vLLM, Ollama, ... | yes |
//! | [`OpenAiResponses`] | the Responses API | no |
//! | [`Anthropic`] | Messages | yes |
//! | [`Gemini`] | `generateContent` | no |
//!
//! Every client retries 429 and 5xx answers with backoff (bounded, honouring `Retry-After`;
//! see [`HttpSettings`]) and reports what went wrong as a [`ModelError`]
//! with the status and the provider's own error body.

mod anthropic;
mod endpoint;
mod gemini;
mod openai_chat;
mod openai_responses;
mod transport;

pub use anthropic::Anthropic;
pub use gemini::Gemini;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;
pub use transport::HttpSettings;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::model::ModelError;

/// Headers from name/value pairs; a value that is not a valid header (a key with a newline)
/// is an error, not a panic.
fn headers(pairs: &[(&'static str, &str)]) -> Result<HeaderMap, ModelError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let value = HeaderValue::from_str(value).map_err(|_| {
            ModelError::new(
                super::model::ModelErrorKind::Provider,
                format!(
                    "the value of the `{name}` header is not valid in HTTP (check the API key)"
                ),
            )
        })?;
        map.insert(HeaderName::from_static(name), value);
    }
    Ok(map)
}

/// `base` and `path` joined with one slash.
fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// The provider's error object in a 200 answer, if it sent one.
fn error_in_body(body: &Value) -> Option<ModelError> {
    let error = body.get("error").filter(|error| !error.is_null())?;
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| error.to_string());
    Some(ModelError::new(
        super::model::ModelErrorKind::Provider,
        format!("the model server answered with an error: {message}"),
    ))
}

/// A reply: its text (none when empty), the calls the [`formats`](crate::formats) readers
/// found, and the tokens from a usage object under the provider's two key names.
fn reply(
    text: String,
    calls: &[crate::ToolCall],
    usage: Option<&Value>,
    (input, output): (&str, &str),
) -> super::model::ModelReply {
    super::model::ModelReply {
        text: (!text.is_empty()).then_some(text),
        calls: calls.iter().map(super::message::ModelCall::from).collect(),
        usage: crate::usage::Usage {
            input_tokens: count(usage, input),
            output_tokens: count(usage, output),
        },
        correction: None,
        cut_off: false,
    }
}

/// A reply being streamed, event by event.
trait Streamed: Default {
    /// Takes one event's data, its pieces shown to `emit` as they come.
    fn take(&mut self, data: &Value, emit: &dyn Fn(super::model::Delta)) -> Result<(), ModelError>;

    /// The whole reply, once the stream ended.
    fn finished(self) -> Result<super::model::ModelReply, ModelError>;
}

/// Reads a streamed reply: each event taken as it comes (its pieces shown to `on_delta`),
/// then the whole reply.
async fn read_stream<S: Streamed>(
    events: impl futures::Stream<Item = Result<(String, Value), ModelError>>,
    on_delta: Option<&(dyn Fn(super::model::Delta) + Send + Sync)>,
) -> Result<super::model::ModelReply, ModelError> {
    use futures::StreamExt as _;
    let mut events = std::pin::pin!(events);
    let mut streamed = S::default();
    let emit = |delta| {
        if let Some(on_delta) = on_delta {
            on_delta(delta);
        }
    };
    while let Some(event) = events.next().await {
        let (_, data) = event?;
        streamed.take(&data, &emit)?;
    }
    streamed.finished()
}

/// Whether the provider says, at `pointer` in `answer`, that the model stopped at its
/// output limit (one of `reasons`).
fn stopped_at_limit(answer: &Value, pointer: &str, reasons: &[&str]) -> bool {
    let reason = answer.pointer(pointer).and_then(Value::as_str);
    reason.is_some_and(|reason| reasons.contains(&reason))
}

/// A count from a usage object.
fn count(usage: Option<&Value>, key: &str) -> u64 {
    usage
        .and_then(|usage| usage.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}
