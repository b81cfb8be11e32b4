//! Talking HTTP to a model server: bounded retries of 429 and 5xx with backoff (honouring
//! `Retry-After`), timeouts, bounded bodies, and errors that say what the provider said.

use std::time::Duration;

use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{Response, StatusCode};
use serde_json::Value;

use crate::agent::model::{ModelError, ModelErrorKind};
use crate::util::bounded::clip;

/// How a client talks to its server.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Longest wait for a whole answer (for a stream, for each piece). Default 120 s.
    pub timeout: Duration,
    /// Retries of a 429 or 5xx answer, or of a failed connection. Default 3.
    pub max_retries: u32,
    /// First wait before a retry, doubled each time. Default 500 ms.
    pub initial_backoff: Duration,
    /// Longest wait before a retry; a `Retry-After` longer than it is not waited for (the
    /// error is returned at once). Default 30 s.
    pub max_backoff: Duration,
    /// Largest answer read, in bytes. Default 16 MiB.
    pub max_response_bytes: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            timeout: Duration::from_secs(120),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_response_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Most of a provider's error body quoted in an error.
const MAX_ERROR_BODY: usize = 4096;

#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    pub(crate) settings: HttpSettings,
}

impl Transport {
    pub(crate) fn new(settings: HttpSettings) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("an HTTP client with default TLS settings builds");
        Transport { client, settings }
    }

    /// Posts `body` and returns the JSON answer.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Value, ModelError> {
        let response = self.send(url, headers, body, false).await?;
        let bytes = self.read_body(response).await?;
        parse_json(&bytes)
    }

    /// Posts `body` asking for a stream: the server-sent events of the answer, as JSON values
    /// of their `data` with their `event` name (ending at the end of the body or `[DONE]`),
    /// or the whole answer when the server sent JSON instead of a stream.
    pub(crate) async fn post_events(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Answer<impl Stream<Item = Result<(String, Value), ModelError>> + use<>>, ModelError>
    {
        use eventsource_stream::Eventsource;
        let response = self.send(url, headers, body, true).await?;
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        if !content_type.starts_with("text/event-stream") {
            let bytes = self.read_body(response).await?;
            return parse_json(&bytes).map(Answer::Whole);
        }
        let limit = self.settings.max_response_bytes;
        let piece_timeout = self.settings.timeout;
        let mut read = 0usize;
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            read += chunk.len();
            if read > limit {
                let message =
                    format!("the streamed answer is larger than the limit of {limit} bytes");
                return Err(std::io::Error::other(message));
            }
            Ok(chunk)
        });
        let events = bytes
            .eventsource()
            .take_while(|event| {
                let done = matches!(event, Ok(event) if event.data.trim() == "[DONE]");
                std::future::ready(!done)
            })
            .map(|event| match event {
                Ok(event) => serde_json::from_str::<Value>(&event.data)
                    .map(|data| (event.event, data))
                    .map_err(|error| {
                        ModelError::malformed(format!(
                            "a streamed event is not JSON ({error}): {}",
                            clip(&event.data, MAX_ERROR_BODY)
                        ))
                    }),
                Err(error) => Err(ModelError::new(
                    ModelErrorKind::Connect,
                    format!("the stream broke off: {error}"),
                )),
            });
        Ok(Answer::Stream(with_piece_timeout(events, piece_timeout)))
    }

    /// Sends with retries; a successful (2xx) response, or the error.
    async fn send(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
        stream: bool,
    ) -> Result<Response, ModelError> {
        let mut attempt = 0;
        // The status and body of the last refusal: the same answer twice to the same request
        // will come again (a request the server cannot take), so it is not tried a third time.
        let mut last_refusal = None;
        loop {
            #[allow(unused_mut)]
            let mut headers = headers.clone();
            // One trace across processes: the model server sees the request's span.
            #[cfg(feature = "otel")]
            crate::telemetry::propagation::into_headers(&mut headers);
            let mut request = self.client.post(url).headers(headers).json(body);
            if !stream {
                request = request.timeout(self.settings.timeout);
            }
            // A stream has no overall limit, but its headers must come in time.
            let sent = tokio::time::timeout(self.settings.timeout, request.send()).await;
            let failure = match sent {
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => self.refusal(response).await,
                Ok(Err(error)) => sending_failed(&error, url),
                Err(_) => Failure {
                    error: ModelError::new(
                        ModelErrorKind::Timeout,
                        format!("the model server at {url} did not answer in time"),
                    ),
                    retryable: false,
                    retry_after: None,
                },
            };
            let refusal = failure
                .error
                .status
                .map(|status| (status, failure.error.body.clone()));
            if refusal.is_some() && refusal == last_refusal {
                tracing::debug!(url, attempt, error = %failure.error, "the same refusal twice: not retried");
                return Err(failure.error);
            }
            last_refusal = refusal;
            let wait = failure.retry_after(self, attempt);
            match wait {
                Some(wait) if attempt < self.settings.max_retries => {
                    tracing::debug!(url, attempt, wait_ms = wait.as_millis() as u64, error = %failure.error, "retrying the model request");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                _ => return Err(failure.error),
            }
        }
    }

    /// An error status: the provider's body, and whether (and when) to try again.
    async fn refusal(&self, response: Response) -> Failure {
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let body = response
            .bytes()
            .await
            .map(|bytes| clip(&String::from_utf8_lossy(&bytes), MAX_ERROR_BODY).into_owned())
            .unwrap_or_default();
        let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
        let kind = if status == StatusCode::TOO_MANY_REQUESTS {
            ModelErrorKind::RateLimited
        } else {
            ModelErrorKind::Status
        };
        let message = format!("the model server refused the request: {status}");
        let mut error = ModelError::new(kind, message);
        error.status = Some(status.as_u16());
        error.body = (!body.is_empty()).then_some(body);
        Failure {
            error,
            retryable,
            retry_after,
        }
    }

    async fn read_body(&self, response: Response) -> Result<Vec<u8>, ModelError> {
        let limit = self.settings.max_response_bytes;
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|error| sending_failed(&error, "").error)?;
            if body.len() + chunk.len() > limit {
                return Err(ModelError::malformed(format!(
                    "the server's answer is larger than the limit of {limit} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// A streamed answer, or a whole one from a server that does not stream.
pub(crate) enum Answer<S> {
    Stream(S),
    Whole(Value),
}

fn parse_json(bytes: &[u8]) -> Result<Value, ModelError> {
    serde_json::from_slice(bytes).map_err(|error| {
        let text = String::from_utf8_lossy(bytes);
        ModelError::malformed(format!(
            "the server's answer is not JSON ({error}): {}",
            clip(&text, MAX_ERROR_BODY)
        ))
    })
}

/// One failed attempt.
struct Failure {
    error: ModelError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    /// How long to wait before the next attempt, or `None` not to retry.
    fn retry_after(&self, transport: &Transport, attempt: u32) -> Option<Duration> {
        if !self.retryable {
            return None;
        }
        let settings = &transport.settings;
        let wait = match self.retry_after {
            Some(asked) if asked > settings.max_backoff => return None,
            Some(asked) => asked,
            None => backoff(settings, attempt),
        };
        Some(wait)
    }
}

/// Exponential backoff with jitter (up to a quarter more), capped.
fn backoff(settings: &HttpSettings, attempt: u32) -> Duration {
    let base = settings
        .initial_backoff
        .saturating_mul(1u32 << attempt.min(16))
        .min(settings.max_backoff);
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    let jitter = base.mul_f64(f64::from(byte[0]) / 1024.0);
    (base + jitter).min(settings.max_backoff)
}

/// `Retry-After` (seconds or an HTTP date), or OpenAI's `retry-after-ms`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if let Some(millis) = text("retry-after-ms").and_then(|text| text.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(millis.max(0.0) / 1000.0));
    }
    let value = text(RETRY_AFTER.as_str())?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds.max(0.0)).ok();
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

fn sending_failed(error: &reqwest::Error, url: &str) -> Failure {
    let (kind, retryable) = if error.is_timeout() {
        (ModelErrorKind::Timeout, false)
    } else {
        (ModelErrorKind::Connect, error.is_connect())
    };
    let message = if error.is_timeout() {
        format!("the model server at {url} did not answer in time")
    } else {
        format!("the model server at {url} could not be reached: {error}")
    };
    Failure {
        error: ModelError::new(kind, message),
        retryable,
        retry_after: None,
    }
}

/// Ends the stream with a timeout error when no piece comes for `timeout`.
fn with_piece_timeout<S>(
    stream: S,
    timeout: Duration,
) -> impl Stream<Item = Result<(String, Value), ModelError>>
where
    S: Stream<Item = Result<(String, Value), ModelError>>,
{
    let stream = Box::pin(stream);
    futures::stream::unfold(Some(stream), move |state| async move {
        let mut stream = state?;
        match tokio::time::timeout(timeout, stream.next()).await {
            Ok(Some(item)) => Some((item, Some(stream))),
            Ok(None) => None,
            Err(_) => {
                let error = ModelError::new(
                    ModelErrorKind::Timeout,
                    "the model server stopped sending its streamed answer",
                );
                Some((Err(error), None))
            }
        }
    })
}
