//! Anthropic's Messages API.

use crate::usage::Usage;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::endpoint::{Endpoint, endpoint_setters};
use super::{count, error_in_body, headers, read_stream, reply, stopped_at_limit};
use crate::agent::message::{Message, outcomes};
use crate::agent::model::{
    Delta, Model, ModelError, ModelErrorKind, ModelFuture, ModelReply, ModelRequest,
};
use crate::formats::anthropic;

/// The API version sent in `anthropic-version`.
const API_VERSION: &str = "2023-06-01";

/// A Messages API client: `POST {base_url}/v1/messages`.
///
/// ```
/// use toolgate::agent::models::Anthropic;
///
/// let model = Anthropic::new("https://api.anthropic.com", "claude-sonnet-4-5")
///     .api_key("sk-ant-...")
///     .max_tokens(2048)
///     .stream(true);
/// # let _ = model;
/// ```
#[derive(Debug, Clone)]
pub struct Anthropic {
    endpoint: Endpoint,
    max_tokens: u32,
    strict: bool,
    stream: bool,
}

impl Anthropic {
    /// A client of the server at `base_url` (`https://api.anthropic.com`) for `model`.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Anthropic {
            endpoint: Endpoint::new(base_url.into(), model.into()),
            max_tokens: 1024,
            strict: false,
            stream: false,
        }
    }

    endpoint_setters!("Sends `x-api-key: <key>`.", "`temperature`");

    /// Most tokens per reply (the API requires a value; default 1024).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Sends strict-tool-use schemas where a tool allows it.
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
        let messages: Vec<Value> = request.messages.iter().map(write_message).collect();
        let mut body = json!({"model": self.endpoint.model, "max_tokens": self.max_tokens, "messages": messages});
        if let Some(system) = request.system {
            body["system"] = json!(system);
        }
        if !request.tools.is_empty() {
            body["tools"] = anthropic::tools(request.tools, self.strict);
        }
        if self.stream {
            body["stream"] = json!(true);
        }
        self.endpoint.with_params(body)
    }

    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply, ModelError> {
        let url = self.endpoint.url("v1/messages");
        let mut pairs = vec![("anthropic-version", API_VERSION)];
        if let Some(key) = &self.endpoint.api_key {
            pairs.push(("x-api-key", key));
        }
        let headers = headers(&pairs)?;
        let body = self.body(&request);
        let request_parts = (url.as_str(), &headers, &body);
        let read_stream = self
            .stream
            .then_some(|events| read_stream::<Streamed>(events, request.on_delta));
        let endpoint = &self.endpoint;
        endpoint
            .exchange(request_parts, read_stream, read_message)
            .await
    }
}

impl Model for Anthropic {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        Box::pin(Anthropic::respond(self, request))
    }

    fn provider_name(&self) -> &str {
        "anthropic"
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.endpoint.model)
    }
}

fn write_message(message: &Message) -> Value {
    match message {
        Message::User { text } => json!({"role": "user", "content": text}),
        Message::Assistant { text, calls } => {
            let mut blocks = Vec::new();
            if let Some(text) = text.as_deref().filter(|text| !text.is_empty()) {
                blocks.push(json!({"type": "text", "text": text}));
            }
            for call in calls {
                blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments_value()}));
            }
            json!({"role": "assistant", "content": blocks})
        }
        Message::ToolResults { results } => anthropic::tool_result_message(&outcomes(results)),
    }
}

fn read_message(answer: &Value) -> Result<ModelReply, ModelError> {
    if let Some(error) = error_in_body(answer) {
        return Err(error);
    }
    let content = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::malformed("the message has no `content` array"))?;
    let calls = anthropic::calls_from_message(answer)
        .map_err(|error| ModelError::malformed(error.to_string()))?;
    let text: String = content
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let usage = answer.get("usage");
    let mut reply = reply(text, &calls, usage, ("input_tokens", "output_tokens"));
    reply.cut_off = stopped_at_limit(answer, "/stop_reason", &["max_tokens"]);
    Ok(reply)
}

/// A content block being streamed.
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// What a streamed message has brought so far.
#[derive(Default)]
struct Streamed {
    blocks: BTreeMap<usize, Block>,
    usage: Usage,
    started: bool,
    cut_off: bool,
}

impl super::Streamed for Streamed {
    fn take(&mut self, data: &Value, emit: &dyn Fn(Delta)) -> Result<(), ModelError> {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match data.get("type").and_then(Value::as_str).unwrap_or_default() {
            "error" => {
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                return Err(ModelError::new(
                    ModelErrorKind::Provider,
                    format!("the stream reported an error: {message}"),
                ));
            }
            "message_start" => {
                self.started = true;
                self.usage.input_tokens = count(data.pointer("/message/usage"), "input_tokens");
            }
            "message_delta" => {
                self.usage.output_tokens = count(data.get("usage"), "output_tokens");
                self.cut_off |= stopped_at_limit(data, "/delta/stop_reason", &["max_tokens"]);
            }
            "content_block_start" => {
                let block = data.get("content_block").cloned().unwrap_or_default();
                self.blocks
                    .insert(index, started_block(&block, index, emit));
            }
            "content_block_delta" => {
                let delta = data.get("delta").cloned().unwrap_or_default();
                if let Some(block) = self.blocks.get_mut(&index) {
                    grow_block(block, &delta, index, emit);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn finished(self) -> Result<ModelReply, ModelError> {
        if !self.started {
            return Err(ModelError::malformed(
                "the stream ended without a `message_start` event",
            ));
        }
        let content: Vec<Value> = self.blocks.into_values().filter_map(assembled).collect();
        let mut reply = read_message(&json!({"content": content}))?;
        reply.usage = self.usage;
        reply.cut_off = self.cut_off;
        Ok(reply)
    }
}

/// A content block as it starts (a tool call's start is shown to `emit`).
fn started_block(block: &Value, index: usize, emit: &dyn Fn(Delta)) -> Block {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => Block::Text(String::new()),
        Some("tool_use") => {
            let field = |key: &str| {
                let value = block.get(key).and_then(Value::as_str);
                value.unwrap_or_default().to_owned()
            };
            let (id, name) = (field("id"), field("name"));
            emit(Delta::ToolCall {
                index,
                id: Some(id.clone()),
                name: Some(name.clone()),
                arguments: String::new(),
            });
            Block::ToolUse {
                id,
                name,
                json: String::new(),
            }
        }
        _ => Block::Other,
    }
}

/// A block grown by one piece of text or of a tool call's input, shown to `emit`.
fn grow_block(block: &mut Block, delta: &Value, index: usize, emit: &dyn Fn(Delta)) {
    let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
    match (block, delta.get("type").and_then(Value::as_str)) {
        (Block::Text(text), Some("text_delta")) => {
            let piece = piece("text");
            text.push_str(piece);
            emit(Delta::Text(piece.to_owned()));
        }
        (Block::ToolUse { json, .. }, Some("input_json_delta")) => {
            let piece = piece("partial_json");
            json.push_str(piece);
            emit(Delta::ToolCall {
                index,
                id: None,
                name: None,
                arguments: piece.to_owned(),
            });
        }
        _ => {}
    }
}

/// A streamed block as the whole message would have held it; tool input that is not JSON
/// is kept as text, for the registry to report.
fn assembled(block: Block) -> Option<Value> {
    match block {
        Block::Text(text) => Some(json!({"type": "text", "text": text})),
        Block::ToolUse { id, name, json } => {
            let input = if json.trim().is_empty() {
                json!({})
            } else {
                serde_json::from_str(&json).unwrap_or(Value::String(json))
            };
            Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
        }
        Block::Other => None,
    }
}
