//! OpenAI Chat Completions, as OpenAI and every compatible server speak it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::endpoint::{Endpoint, endpoint_setters};
use super::{count, error_in_body, read_stream, reply, stopped_at_limit};
use crate::agent::message::{Message, ModelCall, outcomes};
use crate::agent::model::{Delta, Model, ModelError, ModelFuture, ModelReply, ModelRequest};
use crate::formats::openai;
use crate::usage::Usage;

/// A Chat Completions client: `POST {base_url}/chat/completions`.
///
/// ```
/// use toolgate::agent::models::OpenAiChat;
///
/// let model = OpenAiChat::new("http://127.0.0.1:8080/v1", "gemma")
///     .api_key("sk-...")
///     .param("temperature", 0)
///     .stream(true);
/// # let _ = model;
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiChat {
    endpoint: Endpoint,
    strict: bool,
    stream: bool,
}

impl OpenAiChat {
    /// A client of the server at `base_url` (e.g. `https://api.openai.com/v1`) for `model`.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiChat {
            endpoint: Endpoint::new(base_url.into(), model.into()),
            strict: false,
            stream: false,
        }
    }

    endpoint_setters!(
        "Sends `Authorization: Bearer <key>`.",
        "`temperature` or `max_tokens`"
    );

    /// Sends strict-mode schemas where a tool allows it.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Streams the answer (text and tool-call pieces reach the run's events as they come).
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    fn body(&self, request: &ModelRequest<'_>) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in request.messages {
            write_message(message, &mut messages);
        }
        let mut body = json!({"model": self.endpoint.model, "messages": messages});
        if !request.tools.is_empty() {
            body["tools"] = openai::chat_tools(request.tools, self.strict);
        }
        if self.stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        self.endpoint.with_params(body)
    }

    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply, ModelError> {
        let url = self.endpoint.url("chat/completions");
        let headers = self.endpoint.bearer()?;
        let body = self.body(&request);
        let request_parts = (url.as_str(), &headers, &body);
        let read_stream = self
            .stream
            .then_some(|events| read_stream::<Streamed>(events, request.on_delta));
        let endpoint = &self.endpoint;
        endpoint
            .exchange(request_parts, read_stream, read_completion)
            .await
    }
}

impl Model for OpenAiChat {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        Box::pin(OpenAiChat::respond(self, request))
    }

    fn provider_name(&self) -> &str {
        "openai"
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.endpoint.model)
    }
}

fn write_message(message: &Message, messages: &mut Vec<Value>) {
    match message {
        Message::User { text } => messages.push(json!({"role": "user", "content": text})),
        Message::Assistant { text, calls } => {
            let mut entry = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|call| json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_text()}}))
                    .collect();
                entry["tool_calls"] = Value::Array(calls);
            }
            messages.push(entry);
        }
        Message::ToolResults { results } => {
            messages.extend(openai::tool_messages(&outcomes(results)));
        }
    }
}

/// A whole (not streamed) completion.
fn read_completion(answer: &Value) -> Result<ModelReply, ModelError> {
    if let Some(error) = error_in_body(answer) {
        return Err(error);
    }
    let message = answer
        .pointer("/choices/0/message")
        .ok_or_else(|| ModelError::malformed("the completion has no `choices[0].message`"))?;
    let calls = openai::calls_from_chat(message)
        .map_err(|error| ModelError::malformed(error.to_string()))?;
    let usage = answer.get("usage");
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut reply = reply(
        text.to_owned(),
        &calls,
        usage,
        ("prompt_tokens", "completion_tokens"),
    );
    reply.cut_off = stopped_at_limit(answer, "/choices/0/finish_reason", &["length"]);
    Ok(reply)
}

/// A call being streamed.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// What a streamed completion has brought so far.
#[derive(Default)]
struct Streamed {
    text: String,
    calls: BTreeMap<usize, PartialCall>,
    usage: Usage,
    chunks: usize,
    cut_off: bool,
}

impl super::Streamed for Streamed {
    fn take(&mut self, chunk: &Value, emit: &dyn Fn(Delta)) -> Result<(), ModelError> {
        self.chunks += 1;
        if let Some(error) = error_in_body(chunk) {
            return Err(error);
        }
        if let Some(reported) = chunk.get("usage").filter(|usage| usage.is_object()) {
            self.usage.input_tokens = count(Some(reported), "prompt_tokens");
            self.usage.output_tokens = count(Some(reported), "completion_tokens");
        }
        self.cut_off |= stopped_at_limit(chunk, "/choices/0/finish_reason", &["length"]);
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            return Ok(());
        };
        if let Some(piece) = delta.get("content").and_then(Value::as_str)
            && !piece.is_empty()
        {
            self.text.push_str(piece);
            emit(Delta::Text(piece.to_owned()));
        }
        let pieces = delta.get("tool_calls").and_then(Value::as_array);
        for piece in pieces.into_iter().flatten() {
            self.take_call_piece(piece, emit);
        }
        Ok(())
    }

    fn finished(self) -> Result<ModelReply, ModelError> {
        if self.chunks == 0 {
            return Err(ModelError::malformed(
                "the stream ended without a single chunk",
            ));
        }
        let calls = self
            .calls
            .into_iter()
            .map(|(index, call)| {
                if call.name.is_empty() {
                    return Err(ModelError::malformed(format!(
                        "streamed tool call {index} has no name"
                    )));
                }
                let id = match call.id.is_empty() {
                    true => format!("call_{index}"),
                    false => call.id,
                };
                let (name, arguments) = (call.name, call.arguments);
                Ok(ModelCall {
                    id,
                    name,
                    arguments,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ModelReply {
            text: (!self.text.is_empty()).then_some(self.text),
            calls,
            usage: self.usage,
            correction: None,
            cut_off: self.cut_off,
        })
    }
}

impl Streamed {
    /// A piece of a tool call: its id and name once, then its arguments' text in pieces.
    fn take_call_piece(&mut self, piece: &Value, emit: &dyn Fn(Delta)) {
        let index = piece.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        let call = self.calls.entry(index).or_default();
        let text = |pointer: &str| piece.pointer(pointer).and_then(Value::as_str);
        let (id, name) = (
            text("/id").map(str::to_owned),
            text("/function/name").map(str::to_owned),
        );
        let arguments = text("/function/arguments").unwrap_or("");
        if let Some(id) = &id {
            call.id.clone_from(id);
        }
        if let Some(name) = &name {
            call.name.push_str(name);
        }
        call.arguments.push_str(arguments);
        emit(Delta::ToolCall {
            index,
            id,
            name,
            arguments: arguments.to_owned(),
        });
    }
}
