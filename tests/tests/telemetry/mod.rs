//! What the telemetry tests share: a registry's telemetry exporting to memory, and ways to
//! read the spans it made.

#![allow(dead_code)]

use opentelemetry::trace::{SpanId, Status};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use toolgate::telemetry::Telemetry;

/// Telemetry whose spans are kept in memory as they end.
pub struct Recorded {
    pub exporter: InMemorySpanExporter,
    pub provider: SdkTracerProvider,
}

impl Recorded {
    pub fn new() -> Self {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        Recorded { exporter, provider }
    }

    pub fn telemetry(&self, capture: bool) -> Telemetry {
        Telemetry::builder()
            .tracer_provider(&self.provider)
            .capture_content(capture)
            .build()
    }

    pub fn spans(&self) -> Vec<SpanData> {
        self.exporter.get_finished_spans().unwrap()
    }

    /// The one span named `name`.
    pub fn span(&self, name: &str) -> SpanData {
        let spans = self.spans();
        let mut named = spans.iter().filter(|span| span.name == name);
        let span = named
            .next()
            .unwrap_or_else(|| panic!("no span `{name}` in {:?}", names(&spans)));
        assert!(named.next().is_none(), "two spans `{name}`");
        span.clone()
    }
}

pub fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|span| span.name.to_string()).collect()
}

/// The attribute `key` of `span`, as text (`None` if absent).
pub fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|attribute| attribute.key.as_str() == key)
        .map(|attribute| value_text(&attribute.value))
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.to_string(),
        other => other.to_string(),
    }
}

/// Everything a span would export, as one text: name, attributes, events, links, status.
pub fn exported_text(span: &SpanData) -> String {
    let attributes = |list: &[KeyValue]| {
        list.iter()
            .map(|kv| format!("{}={}", kv.key, value_text(&kv.value)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let events: Vec<String> = span
        .events
        .events
        .iter()
        .map(|event| format!("{} {}", event.name, attributes(&event.attributes)))
        .collect();
    let status = match &span.status {
        Status::Error { description } => description.to_string(),
        _ => String::new(),
    };
    format!(
        "{} {} {} {}",
        span.name,
        attributes(&span.attributes),
        events.join(" "),
        status
    )
}

pub fn is_error(span: &SpanData) -> bool {
    matches!(span.status, Status::Error { .. })
}

pub fn parent_of(span: &SpanData) -> SpanId {
    span.parent_span_id
}
