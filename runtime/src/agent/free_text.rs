//! Tool calling for models without it: the tools are described in the system prompt, calls
//! are read from the reply's text, and results are fed back as text.

use std::fmt::Write as _;

use super::message::{Message, ModelCall, ToolResult};
use super::model::{Model, ModelFuture, ModelReply, ModelRequest};
use crate::formats::{FormatErrorKind, calls_from_text, outcome_text};

/// Wraps a model that cannot call tools natively: it is sent no `tools`, but a system
/// prompt that lists them and says how to call one (a JSON object in a ```json block); its
/// replies are read with [`calls_from_text`]. A reply with two separate call candidates is
/// not guessed at: the model is told and asked again.
///
/// ```
/// # #[cfg(feature = "models")] {
/// use toolgate::agent::FreeText;
/// use toolgate::agent::models::OpenAiChat;
///
/// let model = FreeText::new(OpenAiChat::new("http://127.0.0.1:8080/v1", "base-model"));
/// # let _ = model;
/// # }
/// ```
pub struct FreeText<M> {
    inner: M,
}

impl<M: Model> FreeText<M> {
    /// Free-text tool calling over `inner`.
    pub fn new(inner: M) -> Self {
        FreeText { inner }
    }
}

impl<M: Model> Model for FreeText<M> {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        Box::pin(async move {
            let system = system_prompt(request.system, &request);
            let messages = as_text(request.messages);
            let plain = ModelRequest {
                system: Some(&system),
                messages: &messages,
                tools: &[],
                on_delta: request.on_delta,
            };
            let reply = self.inner.respond(plain).await?;
            Ok(read_calls(reply))
        })
    }
}

fn system_prompt(system: Option<&str>, request: &ModelRequest<'_>) -> String {
    let mut prompt = system.map(|text| format!("{text}\n\n")).unwrap_or_default();
    if request.tools.is_empty() {
        return prompt.trim_end().to_owned();
    }
    prompt.push_str(
        "You can call tools. To call one, answer with only a JSON object in a ```json block: \
         {\"name\": \"<tool name>\", \"arguments\": {...}}. To call several at once, put a JSON \
         array of such objects in one block. You will get each result back; then answer the \
         user in plain text, without JSON.\n\nTools:\n",
    );
    for tool in request.tools {
        let schema = tool.input_schema.to_string();
        let _ = writeln!(
            prompt,
            "- {}: {}\n  arguments schema: {schema}",
            tool.name, tool.description
        );
    }
    prompt
}

/// The conversation with calls and results written out as text.
fn as_text(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|message| match message {
            Message::Assistant { text, calls } if !calls.is_empty() => Message::Assistant {
                text: Some(calls_as_text(text.as_deref(), calls)),
                calls: Vec::new(),
            },
            Message::ToolResults { results } => Message::User {
                text: results_as_text(results),
            },
            other => other.clone(),
        })
        .collect()
}

fn calls_as_text(text: Option<&str>, calls: &[ModelCall]) -> String {
    let objects: Vec<serde_json::Value> = calls
        .iter()
        .map(|call| serde_json::json!({"name": call.name, "arguments": call.arguments_value()}))
        .collect();
    let json = match objects.as_slice() {
        [one] => one.to_string(),
        _ => serde_json::Value::Array(objects).to_string(),
    };
    match text {
        Some(text) if !text.trim().is_empty() => format!("{text}\n```json\n{json}\n```"),
        _ => format!("```json\n{json}\n```"),
    }
}

fn results_as_text(results: &[ToolResult]) -> String {
    let mut text = String::new();
    for result in results {
        let _ = writeln!(
            text,
            "Result of {}: {}",
            result.tool,
            outcome_text(&result.to_outcome())
        );
    }
    text.trim_end().to_owned()
}

/// The reply's calls, read from its text; plain text is the answer.
fn read_calls(mut reply: ModelReply) -> ModelReply {
    let Some(text) = reply.text.as_deref() else {
        return reply;
    };
    match calls_from_text(text) {
        Ok(calls) => {
            reply.calls = calls.iter().map(ModelCall::from).collect();
        }
        Err(error) if error.kind == FormatErrorKind::NothingFound => {}
        Err(error) => {
            reply.correction = Some(format!(
                "Your tool call could not be read: {}. Try again.",
                error.message
            ));
        }
    }
    reply
}
