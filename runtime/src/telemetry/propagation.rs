//! W3C trace context (`traceparent`, `tracestate`) read from what comes in (HTTP headers,
//! MCP's `params._meta`) and written into what goes out (imported MCP servers, model
//! requests, HTTP tools), so that one trace crosses processes.

// Each adapter (HTTP and MCP read, MCP and the models write) uses its own part of them.
#![cfg_attr(
    not(all(feature = "axum", feature = "mcp", feature = "models")),
    allow(dead_code)
)]

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanContext, TraceContextExt};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};

/// The headers or `_meta` keys W3C trace context is carried in.
const FIELDS: [&str; 2] = ["traceparent", "tracestate"];

/// The trace context `headers` carry, as the parent of what handles them (the current
/// context, with none there).
pub(crate) fn from_headers(headers: &http::HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&Headers(headers))
}

/// Writes the current trace context into `headers` (nothing when no span is current).
pub(crate) fn into_headers(headers: &mut http::HeaderMap) {
    for (name, value) in Context::map_current(fields_of) {
        let name = http::HeaderName::from_bytes(name.as_bytes());
        let value = http::HeaderValue::from_str(&value);
        if let (Ok(name), Ok(value)) = (name, value) {
            headers.insert(name, value);
        }
    }
}

/// The trace context an MCP request's `_meta` carries.
pub(crate) fn from_meta(meta: &Map<String, Value>) -> Context {
    TraceContextPropagator::new().extract(&Meta(meta))
}

/// Writes the current trace context into an MCP request's `_meta`.
pub(crate) fn into_meta(meta: &mut Map<String, Value>) {
    for (key, value) in Context::map_current(fields_of) {
        meta.insert(key, Value::String(value));
    }
}

/// The W3C trace context of the current span as header names and values (`traceparent`,
/// and `tracestate` when there is one), for a request a tool sends, so that the server it
/// calls continues the call's trace; empty outside a span. A tool runs inside its call's
/// span, so this is the call's context.
///
/// ```
/// for (name, value) in toolgate::telemetry::trace_context_headers() {
///     // request = request.header(name, value);
///     # let _ = (name, value);
/// }
/// ```
pub fn trace_context_headers() -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Context::map_current(fields_of).into_iter().collect();
    headers.sort();
    headers
}

/// The `traceparent` of `context`'s span, if it has a valid one.
pub(crate) fn traceparent_of(context: &Context) -> Option<String> {
    fields_of(context).remove("traceparent")
}

/// The W3C fields of `context`'s span (none when it has no valid span): what every writer
/// of trace context writes.
fn fields_of(context: &Context) -> HashMap<String, String> {
    let mut fields = HashMap::new();
    if context.span().span_context().is_valid() {
        TraceContextPropagator::new().inject_context(context, &mut fields);
    }
    fields
}

/// The span a `traceparent` names, if it is well formed.
pub(crate) fn context_from_traceparent(traceparent: &str) -> Option<SpanContext> {
    let fields = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    let context = TraceContextPropagator::new().extract(&fields);
    let span = context.span().span_context().clone();
    span.is_valid().then_some(span)
}

struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        FIELDS.to_vec()
    }
}

struct Meta<'a>(&'a Map<String, Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        FIELDS.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_read_is_the_span_it_names_and_garbage_is_none() {
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let span = context_from_traceparent(parent).expect("valid");
        assert_eq!(
            span.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert!(context_from_traceparent("00-zz-00-01").is_none());
        let meta = serde_json::json!({"traceparent": parent});
        let context = from_meta(meta.as_object().unwrap());
        assert_eq!(context.span().span_context().span_id(), span.span_id());
        let mut copied = Map::new();
        let _entered = context.attach();
        into_meta(&mut copied);
        assert_eq!(copied["traceparent"], parent);
    }
}
