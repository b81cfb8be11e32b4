//! OpenTelemetry: a span per tool call, model request and agent run, by the GenAI semantic
//! conventions (version [`SEMCONV_VERSION`], pinned: they are marked Development), the
//! registry's own facts under `toolgate.`, W3C trace context read from what comes in and
//! passed on in what goes out, metrics, and export over OTLP (feature `otel`).
//!
//! ```text
//! POST /calls (HTTP server span, traceparent read from the request)
//! └─ execute_tool refund_payment     gen_ai.tool.name, gen_ai.tool.call.id, toolgate.decision,
//!                                    toolgate.approval.*, error.type (a refused call is an error)
//! invoke_agent support               (an agent run)
//! ├─ chat llama                      gen_ai.request.model, gen_ai.usage.*, finish reasons
//! └─ execute_tool get_weather
//! ```
//!
//! Telemetry is a set of stages on the call path ([`crate::stage`]): a call wrapper holds
//! the call's span, an audit sink writes the registry's facts onto it, and the approval
//! steps' events mark when a person was asked and answered. A registry built without it
//! pays nothing; with it, every call is wrapped (the fast path included).
//!
//! A call that waits with a ticket keeps its span's context with the ticket; when a person
//! decides it (later, possibly on another instance), the call's new span links to the span
//! of the request that asked.
//!
//! Arguments and results go on spans only when asked for
//! ([`TelemetryBuilder::capture_content`]), `#[secret]` values redacted (also where a tool
//! echoes one into its result or error) and cut at a bound.
//!
//! ```no_run
//! use toolgate::Registry;
//! use toolgate::telemetry::{OtlpSettings, Telemetry};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Endpoint, protocol and headers from the standard OTEL_EXPORTER_OTLP_* variables.
//! let telemetry = Telemetry::otlp(&OtlpSettings::default())?;
//! let registry = Registry::builder().roles(["public"]).telemetry(telemetry.clone()).build()?;
//! // ... serve ...
//! telemetry.shutdown(); // sends what is still batched
//! # Ok(()) }
//! ```

mod capture;
pub(crate) mod conventions;
mod facts;
mod metrics;
mod otlp;
pub(crate) mod propagation;
mod spans;
mod tool_span;

use std::sync::Arc;

use opentelemetry::InstrumentationScope;
use opentelemetry::global::BoxedTracer;
use opentelemetry::metrics::{Meter, MeterProvider};
use opentelemetry::trace::TracerProvider;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;

pub use conventions::SEMCONV_VERSION;
pub use otlp::{OtlpProtocol, OtlpSettings, TelemetryError};
pub use propagation::trace_context_headers;

use capture::Capture;
use metrics::Instruments;

pub(crate) use facts::{Facts, SecretsSeen, watcher};
pub(crate) use spans::OperationSpan;
pub(crate) use tool_span::ToolSpans;

/// Where toolgate's spans and metrics go, and what they show. Cheap to clone: clones share
/// one set of instruments. Give it to a registry with
/// [`RegistryBuilder::telemetry`](crate::RegistryBuilder::telemetry); the HTTP router, the
/// MCP server and the agent loop of that registry then make their spans too.
#[derive(Clone)]
pub struct Telemetry {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) tracer: BoxedTracer,
    pub(crate) instruments: Instruments,
    pub(crate) capture: Capture,
    /// The providers this telemetry made (OTLP), shut down with it.
    owned: Option<(SdkTracerProvider, SdkMeterProvider)>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Telemetry")
            .field("capture_content", &self.shared.capture.content)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Telemetry`] on providers of the application's.
#[must_use]
pub struct TelemetryBuilder {
    tracer: Option<BoxedTracer>,
    meter: Option<Meter>,
    capture: Capture,
    owned: Option<(SdkTracerProvider, SdkMeterProvider)>,
}

/// The scope toolgate's spans and metrics are made in.
fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("toolgate")
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url(conventions::SCHEMA_URL)
        .build()
}

impl Telemetry {
    /// A builder; spans and metrics go to the global providers unless set.
    pub fn builder() -> TelemetryBuilder {
        TelemetryBuilder {
            tracer: None,
            meter: None,
            capture: Capture::default(),
            owned: None,
        }
    }

    /// Sends what is batched and stops the exporters this telemetry made
    /// ([`otlp`](Self::otlp)); providers of the application's are the application's to
    /// shut down. Blocks until the exporters are done (or time out).
    pub fn shutdown(&self) {
        if let Some((tracer, meter)) = &self.shared.owned {
            let traced = tracer.shutdown();
            let measured = meter.shutdown();
            if let Err(error) = traced.and(measured) {
                tracing::warn!(%error, "telemetry could not be sent in full at shutdown");
            }
        }
    }

    /// Sends what is batched now, without stopping (exporters this telemetry made).
    pub fn flush(&self) {
        if let Some((tracer, meter)) = &self.shared.owned
            && let Err(error) = tracer.force_flush().and(meter.force_flush())
        {
            tracing::warn!(%error, "telemetry could not be sent");
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl TelemetryBuilder {
    /// Spans go to this provider's tracer (e.g. an `SdkTracerProvider` with an exporter).
    pub fn tracer_provider<P>(mut self, provider: &P) -> Self
    where
        P: TracerProvider,
        P::Tracer: Send + Sync + 'static,
        <P::Tracer as opentelemetry::trace::Tracer>::Span: Send + Sync + 'static,
    {
        self.tracer = Some(BoxedTracer::new(Box::new(
            provider.tracer_with_scope(scope()),
        )));
        self
    }

    /// Metrics go to this provider's meter.
    pub fn meter_provider(mut self, provider: &impl MeterProvider) -> Self {
        self.meter = Some(provider.meter_with_scope(scope()));
        self
    }

    /// Puts each call's arguments (`gen_ai.tool.call.arguments`, `#[secret]` ones
    /// redacted) and result (`gen_ai.tool.call.result`, secret values taken out) on its
    /// span. Off by default: they may hold what an operator must not read.
    pub fn capture_content(mut self, capture: bool) -> Self {
        self.capture.content = capture;
        self
    }

    /// The most bytes of arguments or of a result a span shows (default 4096); what is
    /// longer is cut and says how much was left out.
    pub fn max_captured_bytes(mut self, bytes: usize) -> Self {
        self.capture.max_bytes = bytes;
        self
    }

    fn owning(mut self, tracer: SdkTracerProvider, meter: SdkMeterProvider) -> Self {
        self = self.tracer_provider(&tracer).meter_provider(&meter);
        self.owned = Some((tracer, meter));
        self
    }

    /// The telemetry.
    pub fn build(self) -> Telemetry {
        let tracer = self
            .tracer
            .unwrap_or_else(|| opentelemetry::global::tracer_with_scope(scope()));
        let meter = self
            .meter
            .unwrap_or_else(|| opentelemetry::global::meter_with_scope(scope()));
        Telemetry {
            shared: Arc::new(Shared {
                tracer,
                instruments: Instruments::new(&meter),
                capture: self.capture,
                owned: self.owned,
            }),
        }
    }
}
