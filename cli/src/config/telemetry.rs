//! `[telemetry]`: OpenTelemetry export over OTLP. Its mistakes are found when the file is
//! checked; the exporter is made when the registry is built.

use toolgate::telemetry::{OtlpProtocol, OtlpSettings, Telemetry};

use super::Config;
use toolgate_tools::Problem;

impl Config {
    /// What `[telemetry]` asks for, checked: `None` without the table.
    fn telemetry_settings(&self) -> Result<Option<OtlpSettings>, Problem> {
        let Some(key) = &self.file.telemetry else {
            return Ok(None);
        };
        let key = key.get_ref();
        let mut settings = OtlpSettings::default();
        if let Some(endpoint) = &key.endpoint {
            let url = endpoint.get_ref();
            if !url.starts_with("http://") && !url.starts_with("https://") {
                return Err(self.problem_at(
                    endpoint.span(),
                    format!("`{url}` is not a collector URL; write its base URL, e.g. \"http://127.0.0.1:4318\" (HTTP) or \"http://127.0.0.1:4317\" (gRPC)"),
                ));
            }
            settings.endpoint = Some(url.clone());
        }
        if let Some(protocol) = &key.protocol {
            let parsed = OtlpProtocol::parse(protocol.get_ref()).ok_or_else(|| {
                self.problem_at(
                    protocol.span(),
                    format!(
                        "`{}` is not an OTLP protocol toolgate sends; write \"http/protobuf\" or \"grpc\"",
                        protocol.get_ref()
                    ),
                )
            })?;
            settings.protocol = Some(parsed);
        }
        settings.service_name.clone_from(&key.service_name);
        settings.capture_content = key.capture_content;
        settings.metric_interval = key.metric_interval;
        Ok(Some(settings))
    }

    /// Checks `[telemetry]` without making an exporter.
    pub(super) fn check_telemetry(&self) -> Result<(), Problem> {
        self.telemetry_settings().map(drop)
    }

    /// The telemetry `[telemetry]` describes (with the standard variables), if the file has
    /// the table.
    pub fn telemetry(&self) -> Result<Option<Telemetry>, Problem> {
        let Some(settings) = self.telemetry_settings()? else {
            return Ok(None);
        };
        let at = self
            .file
            .telemetry
            .as_ref()
            .map(|key| key.span())
            .unwrap_or_default();
        Telemetry::otlp(&settings)
            .map(Some)
            .map_err(|error| self.problem_at(at, format!("[telemetry]: {error}")))
    }
}
