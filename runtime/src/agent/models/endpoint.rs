//! What every client holds: where the server is, which model, the key, extra request fields,
//! and the transport; and the builder methods they all share.

use std::future::Future;

use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use serde_json::{Map, Value};

use super::transport::{Answer, HttpSettings, Transport};
use super::{headers, join};
use crate::agent::model::{ModelError, ModelReply};

/// A request to a model server: its URL, headers and JSON body.
pub(crate) type Request<'a> = (&'a str, &'a HeaderMap, &'a Value);

/// The server-sent events of a streamed answer: each event's name and JSON data.
pub(crate) type Events = BoxStream<'static, Result<(String, Value), ModelError>>;

#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) transport: Transport,
    base_url: String,
    pub(crate) model: String,
    pub(crate) api_key: Option<String>,
    pub(crate) params: Map<String, Value>,
}

impl Endpoint {
    pub(crate) fn new(base_url: String, model: String) -> Self {
        Endpoint {
            transport: Transport::new(HttpSettings::default()),
            base_url,
            model,
            api_key: None,
            params: Map::new(),
        }
    }

    /// The URL of `path` on the server.
    pub(crate) fn url(&self, path: &str) -> String {
        join(&self.base_url, path)
    }

    /// `body` with the extra request fields.
    pub(crate) fn with_params(&self, mut body: Value) -> Value {
        if let Value::Object(object) = &mut body {
            for (key, value) in &self.params {
                object.insert(key.clone(), value.clone());
            }
        }
        body
    }

    /// Posts `request` (URL, headers, body) and reads the whole JSON answer with `read`.
    pub(crate) async fn post(
        &self,
        (url, headers, body): Request<'_>,
        read: impl FnOnce(&Value) -> Result<ModelReply, ModelError>,
    ) -> Result<ModelReply, ModelError> {
        let answer = self.transport.post_json(url, headers, body).await?;
        read(&answer)
    }

    /// Posts `request` and reads the answer: given `read_stream`, asking for a stream of
    /// events read as they come (a server may still answer whole); else, or then, whole
    /// with `read_whole`.
    pub(crate) async fn exchange<F>(
        &self,
        request: Request<'_>,
        read_stream: Option<impl FnOnce(Events) -> F>,
        read_whole: impl FnOnce(&Value) -> Result<ModelReply, ModelError>,
    ) -> Result<ModelReply, ModelError>
    where
        F: Future<Output = Result<ModelReply, ModelError>>,
    {
        let Some(read_stream) = read_stream else {
            return self.post(request, read_whole).await;
        };
        let (url, headers, body) = request;
        match self.transport.post_events(url, headers, body).await? {
            Answer::Stream(events) => read_stream(Box::pin(events)).await,
            Answer::Whole(answer) => read_whole(&answer),
        }
    }

    /// `Authorization: Bearer <key>`, when there is a key.
    pub(crate) fn bearer(&self) -> Result<HeaderMap, ModelError> {
        match &self.api_key {
            Some(key) => headers(&[("authorization", &format!("Bearer {key}"))]),
            None => headers(&[]),
        }
    }
}

/// The builder methods every client has: `api_key` (sent as `$key_doc` says), `param`, `http`.
macro_rules! endpoint_setters {
    ($key_doc:literal, $param_example:literal) => {
        #[doc = $key_doc]
        pub fn api_key(mut self, key: impl Into<String>) -> Self {
            self.endpoint.api_key = Some(key.into());
            self
        }

        #[doc = concat!("An extra field of every request, e.g. ", $param_example, ".")]
        pub fn param(
            mut self,
            key: impl Into<String>,
            value: impl Into<serde_json::Value>,
        ) -> Self {
            self.endpoint.params.insert(key.into(), value.into());
            self
        }

        /// Timeouts, retries and size limits.
        pub fn http(mut self, settings: super::HttpSettings) -> Self {
            self.endpoint.transport = super::transport::Transport::new(settings);
            self
        }
    };
}

pub(crate) use endpoint_setters;
