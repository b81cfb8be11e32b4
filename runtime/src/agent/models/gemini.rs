//! Gemini's `generateContent`.

use serde_json::{Value, json};

use super::endpoint::{Endpoint, endpoint_setters};
use super::{error_in_body, headers, reply, stopped_at_limit};
use crate::agent::message::{Message, outcomes};
use crate::agent::model::{
    Model, ModelError, ModelErrorKind, ModelFuture, ModelReply, ModelRequest,
};
use crate::formats::gemini;

/// A Gemini client: `POST {base_url}/v1beta/models/{model}:generateContent`.
///
/// ```
/// use toolgate::agent::models::Gemini;
///
/// let model = Gemini::new("https://generativelanguage.googleapis.com", "gemini-2.5-flash")
///     .api_key("...");
/// # let _ = model;
/// ```
#[derive(Debug, Clone)]
pub struct Gemini {
    endpoint: Endpoint,
}

impl Gemini {
    /// A client of the server at `base_url` for `model`.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Gemini {
            endpoint: Endpoint::new(base_url.into(), model.into()),
        }
    }

    endpoint_setters!("Sends `x-goog-api-key: <key>`.", "`generationConfig`");

    fn body(&self, request: &ModelRequest<'_>) -> Value {
        let contents: Vec<Value> = request.messages.iter().map(write_message).collect();
        let mut body = json!({"contents": contents});
        if let Some(system) = request.system {
            body["systemInstruction"] = json!({"parts": [{"text": system}]});
        }
        if !request.tools.is_empty() {
            body["tools"] = gemini::tools(request.tools);
        }
        self.endpoint.with_params(body)
    }

    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply, ModelError> {
        let path = format!("v1beta/models/{}:generateContent", self.endpoint.model);
        let url = self.endpoint.url(&path);
        let headers = match &self.endpoint.api_key {
            Some(key) => headers(&[("x-goog-api-key", key)])?,
            None => headers(&[])?,
        };
        let body = self.body(&request);
        self.endpoint
            .post((&url, &headers, &body), read_response)
            .await
    }
}

impl Model for Gemini {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        Box::pin(Gemini::respond(self, request))
    }

    fn provider_name(&self) -> &str {
        "gcp.gemini"
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.endpoint.model)
    }
}

fn write_message(message: &Message) -> Value {
    match message {
        Message::User { text } => json!({"role": "user", "parts": [{"text": text}]}),
        Message::Assistant { text, calls } => {
            let mut parts = Vec::new();
            if let Some(text) = text.as_deref().filter(|text| !text.is_empty()) {
                parts.push(json!({"text": text}));
            }
            for call in calls {
                let mut function_call = json!({"name": call.name, "args": call.arguments_value()});
                if !call.id.starts_with(gemini::GENERATED_ID_PREFIX) {
                    function_call["id"] = json!(call.id);
                }
                parts.push(json!({"functionCall": function_call}));
            }
            json!({"role": "model", "parts": parts})
        }
        Message::ToolResults { results } => gemini::function_response_content(&outcomes(results)),
    }
}

fn read_response(answer: &Value) -> Result<ModelReply, ModelError> {
    if let Some(error) = error_in_body(answer) {
        return Err(error);
    }
    if let Some(reason) = answer
        .pointer("/promptFeedback/blockReason")
        .and_then(Value::as_str)
    {
        return Err(ModelError::new(
            ModelErrorKind::Provider,
            format!("the prompt was blocked: {reason}"),
        ));
    }
    let parts = answer
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            ModelError::malformed("the response has no `candidates[0].content.parts`")
        })?;
    let calls = gemini::calls_from_response(answer)
        .map_err(|error| ModelError::malformed(error.to_string()))?;
    let text: String = parts
        .iter()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let usage = answer.get("usageMetadata");
    let mut reply = reply(
        text,
        &calls,
        usage,
        ("promptTokenCount", "candidatesTokenCount"),
    );
    reply.cut_off = stopped_at_limit(answer, "/candidates/0/finishReason", &["MAX_TOKENS"]);
    Ok(reply)
}
