//! HTTP tools: one request built from the call's arguments. The URL's `{name}` placeholders
//! take arguments (percent-encoded as RFC 3986 path segments, so an argument cannot add a
//! path, query or host); the other arguments become the query (`GET`, `DELETE`) or a JSON
//! body (`POST`, `PUT`, `PATCH`; those named in `query` go in the query). Headers may take secrets from the environment (`${NAME}`). The address is
//! checked as `fetch_webpage` checks it (public addresses only, unless the application
//! allows a network; the connection goes to the address checked), and no redirect is
//! followed.

use std::collections::BTreeMap;
use std::sync::Arc;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Method;
use serde_json::{Map, Value, json};
use toolgate::{ErrorCode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolResult};
use url::Url;

use super::environment::interpolate;
use super::spec::HttpSpec;
use crate::web::{WebConfig, pinned_client, read_body};

/// What a placeholder's value is escaped of: all but RFC 3986's unreserved characters
/// (letters, digits, `-`, `.`, `_`, `~`), so a value is one path segment (or query value),
/// never more.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Most bytes of an error answer quoted in the tool error.
const ERROR_BODY_QUOTE: usize = 500;

/// A tool that sends one HTTP request (see the module's documentation).
#[derive(Clone)]
pub(crate) struct HttpTool {
    inner: Arc<Inner>,
}

struct Inner {
    definition: ToolDefinition,
    method: Method,
    url: String,
    /// The URL's `{name}` placeholders, found once when the file loads.
    placeholders: Vec<String>,
    /// Arguments sent in the query whatever the method.
    query: Vec<String>,
    headers: BTreeMap<String, String>,
    web: Arc<WebConfig>,
}

/// The request's method, checked when the file loads.
pub(crate) fn method(spec: &HttpSpec) -> Result<Method, String> {
    match spec.method.to_ascii_uppercase().as_str() {
        "GET" => Ok(Method::GET),
        "POST" => Ok(Method::POST),
        "PUT" => Ok(Method::PUT),
        "PATCH" => Ok(Method::PATCH),
        "DELETE" => Ok(Method::DELETE),
        other => Err(format!(
            "the method `{other}` is not one of GET, POST, PUT, PATCH, DELETE"
        )),
    }
}

/// The `{name}` placeholders of a URL template.
pub(crate) fn placeholders(template: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        found.push(&rest[start + 1..start + end]);
        rest = &rest[start + end + 1..];
    }
    found
}

impl HttpTool {
    pub(crate) fn new(
        definition: ToolDefinition,
        spec: &HttpSpec,
        method: Method,
        web: Arc<WebConfig>,
    ) -> Self {
        HttpTool {
            inner: Arc::new(Inner {
                definition,
                method,
                url: spec.url.clone(),
                placeholders: placeholders(&spec.url)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                headers: spec.headers.clone(),
                query: spec.query.clone(),
                web,
            }),
        }
    }
}

impl Tool for HttpTool {
    fn definition(&self) -> ToolDefinition {
        self.inner.definition.clone()
    }

    /// What an approver is shown: the request (headers by name only, `secret` arguments
    /// redacted).
    fn review(
        &self,
        _context: &ToolContext,
        arguments: &Value,
    ) -> Result<Option<Value>, ToolError> {
        let mut shown = arguments.clone();
        for name in &self.inner.definition.secret_arguments {
            if let Some(value) = shown.get_mut(name) {
                *value = json!("[redacted]");
            }
        }
        let (url, body) = self.inner.request_for(shown)?;
        let headers: Vec<&String> = self.inner.headers.keys().collect();
        Ok(Some(json!({
            "method": self.inner.method.as_str(),
            "url": url.as_str(),
            "headers": headers,
            "body": body,
        })))
    }

    fn call(&self, _context: ToolContext, arguments: Value) -> ToolFuture {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let limit = inner.web.timeout;
            match tokio::time::timeout(limit, inner.send(arguments)).await {
                Ok(result) => result,
                Err(_) => Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!("the server did not answer within {} s", limit.as_secs_f64()),
                )),
            }
        })
    }
}

impl Inner {
    /// The request's URL (placeholders filled, the query added) and its JSON body, if any.
    fn request_for(&self, arguments: Value) -> Result<(Url, Option<Value>), ToolError> {
        let Value::Object(mut arguments) = arguments else {
            return Err(ToolError::invalid_arguments("the arguments are an object"));
        };
        let mut url = self.url_for(&mut arguments)?;
        if !matches!(self.method, Method::GET | Method::DELETE) {
            let in_query: Map<String, Value> = self
                .query
                .iter()
                .filter_map(|name| arguments.remove_entry(name))
                .collect();
            let pairs = query_pairs(&in_query);
            if !pairs.is_empty() {
                url.query_pairs_mut().extend_pairs(pairs);
            }
            return Ok((url, Some(Value::Object(arguments))));
        }
        let pairs = query_pairs(&arguments);
        if !pairs.is_empty() {
            url.query_pairs_mut().extend_pairs(pairs);
        }
        Ok((url, None))
    }

    async fn send(&self, arguments: Value) -> ToolResult {
        let (url, body) = self.request_for(arguments)?;
        let client = pinned_client(&self.web, &url).await?;
        let mut request = client.request(self.method.clone(), url.clone());
        // One trace across processes: the server sees the call's span.
        #[cfg(feature = "otel")]
        for (name, value) in toolgate::telemetry::trace_context_headers() {
            request = request.header(name, value);
        }
        for (name, value) in &self.headers {
            request = request.header(name, interpolate(value)?);
        }
        if let Some(body) = &body {
            request = request.json(body);
        }
        let mut response = request.send().await.map_err(|error| {
            ToolError::new(
                "fetch_failed",
                format!("`{} {url}` failed: {}", self.method, without_url(&error)),
            )
        })?;
        let status = response.status();
        let (body, truncated) = read_body(&mut response, self.web.max_bytes, &url).await?;
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            let quote: String = text.chars().take(ERROR_BODY_QUOTE).collect();
            return Err(ToolError::execution(format!(
                "`{} {url}` answered {status}: {}",
                self.method,
                quote.trim()
            ))
            .with_details(json!({"status": status.as_u16()})));
        }
        Ok(match serde_json::from_slice::<Value>(&body) {
            Ok(value) if !truncated => value,
            _ => Value::String(text.into_owned()),
        })
    }

    /// The URL with its placeholders filled; the arguments used are taken out.
    fn url_for(&self, arguments: &mut Map<String, Value>) -> Result<Url, ToolError> {
        let mut filled = self.url.clone();
        for name in &self.placeholders {
            let value = arguments.remove(name).unwrap_or(Value::Null);
            let text = match &value {
                Value::String(text) => text.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            // `.` and `..` would be read as "this folder" and "the folder above".
            if text == "." || text == ".." {
                return Err(ToolError::invalid_arguments(format!(
                    "`{name}` cannot be `{text}`: it would change the request's path"
                )));
            }
            let encoded = utf8_percent_encode(&text, PATH_SEGMENT).to_string();
            filled = filled.replace(&format!("{{{name}}}"), &encoded);
        }
        Url::parse(&filled).map_err(|error| {
            ToolError::execution(format!("the tool's URL `{filled}` is not valid: {error}"))
        })
    }
}

/// Arguments as query pairs: an array repeats its name, an object is sent as JSON text.
fn query_pairs(arguments: &Map<String, Value>) -> Vec<(String, String)> {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut pairs = Vec::new();
    for (name, value) in arguments {
        match value {
            Value::Null => {}
            Value::Array(items) => {
                pairs.extend(items.iter().map(|item| (name.clone(), text(item))))
            }
            other => pairs.push((name.clone(), text(other))),
        }
    }
    pairs
}

/// reqwest's error text without the URL it repeats (the message names it already).
fn without_url(error: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut deepest = error.to_string();
    while let Some(inner) = source {
        deepest = inner.to_string();
        source = inner.source();
    }
    deepest
}
