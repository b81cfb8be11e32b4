//! The OpenAI Responses API.

use serde_json::{Value, json};

use super::endpoint::{Endpoint, endpoint_setters};
use super::{error_in_body, reply, stopped_at_limit};
use crate::agent::message::{Message, outcomes};
use crate::agent::model::{
    Model, ModelError, ModelErrorKind, ModelFuture, ModelReply, ModelRequest,
};
use crate::formats::openai;

/// A Responses API client: `POST {base_url}/responses`, the whole conversation sent each
/// turn (no server-side state is relied on).
///
/// ```
/// use toolgate::agent::models::OpenAiResponses;
///
/// let model = OpenAiResponses::new("https://api.openai.com/v1", "gpt-4.1-mini").api_key("sk-...");
/// # let _ = model;
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiResponses {
    endpoint: Endpoint,
    strict: bool,
}

impl OpenAiResponses {
    /// A client of the server at `base_url` for `model`.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiResponses {
            endpoint: Endpoint::new(base_url.into(), model.into()),
            strict: false,
        }
    }

    endpoint_setters!(
        "Sends `Authorization: Bearer <key>`.",
        "`temperature` or `max_output_tokens`"
    );

    /// Sends strict-mode schemas where a tool allows it.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    fn body(&self, request: &ModelRequest<'_>) -> Value {
        let mut input = Vec::new();
        for message in request.messages {
            write_message(message, &mut input);
        }
        let mut body = json!({"model": self.endpoint.model, "input": input, "store": false});
        if let Some(system) = request.system {
            body["instructions"] = json!(system);
        }
        if !request.tools.is_empty() {
            body["tools"] = openai::responses_tools(request.tools, self.strict);
        }
        self.endpoint.with_params(body)
    }

    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply, ModelError> {
        let url = self.endpoint.url("responses");
        let headers = self.endpoint.bearer()?;
        let body = self.body(&request);
        self.endpoint
            .post((&url, &headers, &body), read_response)
            .await
    }
}

impl Model for OpenAiResponses {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        Box::pin(OpenAiResponses::respond(self, request))
    }

    fn provider_name(&self) -> &str {
        "openai"
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.endpoint.model)
    }
}

fn write_message(message: &Message, input: &mut Vec<Value>) {
    match message {
        Message::User { text } => input.push(json!({"role": "user", "content": text})),
        Message::Assistant { text, calls } => {
            if let Some(text) = text.as_deref().filter(|text| !text.is_empty()) {
                input.push(json!({"role": "assistant", "content": text}));
            }
            for call in calls {
                input.push(json!({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments_text()}));
            }
        }
        Message::ToolResults { results } => {
            input.extend(openai::function_call_outputs(&outcomes(results)));
        }
    }
}

fn read_response(answer: &Value) -> Result<ModelReply, ModelError> {
    if let Some(error) = error_in_body(answer) {
        return Err(error);
    }
    if answer.get("status").and_then(Value::as_str) == Some("failed") {
        return Err(ModelError::new(
            ModelErrorKind::Provider,
            "the response failed",
        ));
    }
    let output = answer
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::malformed("the response has no `output` array"))?;
    let calls = openai::calls_from_responses(answer)
        .map_err(|error| ModelError::malformed(error.to_string()))?;
    let text: String = output
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
        .flat_map(|item| {
            item.get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("output_text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let usage = answer.get("usage");
    let mut reply = reply(text, &calls, usage, ("input_tokens", "output_tokens"));
    let limit = &["max_output_tokens"];
    reply.cut_off = stopped_at_limit(answer, "/incomplete_details/reason", limit);
    Ok(reply)
}
