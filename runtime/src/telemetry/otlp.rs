//! Export over OTLP (gRPC or HTTP/protobuf) with the official exporter, set up in code or
//! in `toolgate.toml`'s `[telemetry]`, and honouring the standard `OTEL_EXPORTER_OTLP_*`
//! and `OTEL_SERVICE_NAME` variables.

use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::{Telemetry, TelemetryBuilder};

/// How OTLP is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OtlpProtocol {
    /// gRPC (default port 4317). Needs a Tokio runtime where the telemetry is made.
    Grpc,
    /// HTTP with protobuf bodies (default port 4318): `/v1/traces`, `/v1/metrics`.
    HttpProtobuf,
}

impl OtlpProtocol {
    /// The protocol the standard variable names (`grpc`, `http/protobuf`), if it names one.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "grpc" => Some(OtlpProtocol::Grpc),
            "http/protobuf" => Some(OtlpProtocol::HttpProtobuf),
            _ => None,
        }
    }
}

/// Where and how telemetry is exported. What is left unset comes from the standard
/// variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`,
/// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` and their `TRACES_` and
/// `METRICS_` forms, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), then from OTLP's
/// defaults (HTTP/protobuf to `http://localhost:4318`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct OtlpSettings {
    /// The collector's base URL (e.g. `http://127.0.0.1:4318`); over HTTP the signal's
    /// path (`/v1/traces`, `/v1/metrics`) is added.
    pub endpoint: Option<String>,
    /// The protocol.
    pub protocol: Option<OtlpProtocol>,
    /// The service's name (`service.name`) when `OTEL_SERVICE_NAME` does not say it; else
    /// `toolgate`.
    pub service_name: Option<String>,
    /// Whether arguments and results go on spans ([`TelemetryBuilder::capture_content`]).
    pub capture_content: bool,
    /// How often metrics are sent (default 60 s, or `OTEL_METRIC_EXPORT_INTERVAL`).
    pub metric_interval: Option<std::time::Duration>,
}

/// Why telemetry could not be set up.
#[derive(Debug)]
#[non_exhaustive]
pub enum TelemetryError {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` (or its `TRACES_` form) names a protocol toolgate does
    /// not send.
    UnknownProtocol(String),
    /// The exporter refused its settings (e.g. a malformed endpoint).
    Exporter(String),
}

impl std::fmt::Display for TelemetryError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TelemetryError::UnknownProtocol(name) => write!(
                formatter,
                "OTLP protocol `{name}` is not one toolgate sends: use `grpc` or `http/protobuf`"
            ),
            TelemetryError::Exporter(why) => {
                write!(formatter, "the OTLP exporter could not be set up: {why}")
            }
        }
    }
}

impl std::error::Error for TelemetryError {}

impl OtlpSettings {
    /// The protocol: as set, else as the standard variables say, else HTTP/protobuf.
    fn protocol(&self) -> Result<OtlpProtocol, TelemetryError> {
        if let Some(protocol) = self.protocol {
            return Ok(protocol);
        }
        let named = [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ]
        .iter()
        .find_map(|variable| std::env::var(variable).ok());
        match named {
            None => Ok(OtlpProtocol::HttpProtobuf),
            Some(name) => OtlpProtocol::parse(&name).ok_or(TelemetryError::UnknownProtocol(name)),
        }
    }

    /// The resource: the standard variables, then the service name set here.
    fn resource(&self) -> Resource {
        let from_environment =
            std::env::var("OTEL_SERVICE_NAME").is_ok_and(|name| !name.is_empty());
        let builder = Resource::builder();
        match (&self.service_name, from_environment) {
            (_, true) => builder.build(),
            (Some(name), false) => builder.with_service_name(name.clone()).build(),
            (None, false) => builder.with_service_name("toolgate").build(),
        }
    }
}

impl Telemetry {
    /// Telemetry exported over OTLP: spans batched, metrics sent periodically.
    /// [`shutdown`](Self::shutdown) sends what is left.
    pub fn otlp(settings: &OtlpSettings) -> Result<Telemetry, TelemetryError> {
        let protocol = settings.protocol()?;
        let (spans, metrics) = exporters(settings, protocol)?;
        let resource = settings.resource();
        let tracer = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let mut reader = PeriodicReader::builder(metrics);
        if let Some(interval) = settings.metric_interval {
            reader = reader.with_interval(interval);
        }
        let meter = SdkMeterProvider::builder()
            .with_reader(reader.build())
            .with_resource(resource)
            .build();
        let builder: TelemetryBuilder =
            Telemetry::builder().capture_content(settings.capture_content);
        Ok(builder.owning(tracer, meter).build())
    }
}

/// The span and metric exporters for `protocol`.
fn exporters(
    settings: &OtlpSettings,
    protocol: OtlpProtocol,
) -> Result<(SpanExporter, MetricExporter), TelemetryError> {
    let failed =
        |error: opentelemetry_otlp::ExporterBuildError| TelemetryError::Exporter(error.to_string());
    let base = settings
        .endpoint
        .as_deref()
        .map(|url| url.trim_end_matches('/'));
    match protocol {
        OtlpProtocol::HttpProtobuf => {
            let mut spans = SpanExporter::builder().with_http();
            let mut metrics = MetricExporter::builder().with_http();
            if let Some(base) = base {
                spans = spans.with_endpoint(format!("{base}/v1/traces"));
                metrics = metrics.with_endpoint(format!("{base}/v1/metrics"));
            }
            Ok((
                spans.build().map_err(failed)?,
                metrics.build().map_err(failed)?,
            ))
        }
        OtlpProtocol::Grpc => {
            let mut spans = SpanExporter::builder().with_tonic();
            let mut metrics = MetricExporter::builder().with_tonic();
            if let Some(base) = base {
                spans = spans.with_endpoint(base);
                metrics = metrics.with_endpoint(base);
            }
            Ok((
                spans.build().map_err(failed)?,
                metrics.build().map_err(failed)?,
            ))
        }
    }
}
