//! Logging that keeps secrets: toolgate's own events never carry a `#[secret]` value, but
//! a dependency may log whole protocol messages. rmcp writes every MCP request and
//! response it handles (`received request`, `response message`) with its `Debug` at DEBUG
//! and TRACE, and some unexpected messages at WARN: with verbose logging on, a secret sent
//! over MCP would be written in clear. `tungstenite` writes a WebSocket handshake's request,
//! a device's token with it, at TRACE.
//!
//! [`keeping_secrets`] turns a filter (as given to `tracing_subscriber::EnvFilter`, or in
//! `RUST_LOG`) into one that holds those dependencies to levels at which they write no
//! message bodies, whatever the filter asked for them; [`QUIET_DEPENDENCIES`] are the
//! directives it adds. The `toolgate` command and the examples log through it.
//!
//! ```
//! let filter = toolgate::logging::keeping_secrets("trace,rmcp=trace");
//! assert_eq!(filter, "trace,rmcp=warn,rmcp::service::client=error,tungstenite=info,tokio_tungstenite=info");
//! // tracing_subscriber::fmt().with_env_filter(EnvFilter::new(filter)).init();
//! ```
//!
//! An application that filters otherwise (its own `Layer`, a `Targets` filter) keeps the
//! promise by holding the targets of [`QUIET_DEPENDENCIES`] to the levels named there.

/// Directives (`target=level`) holding dependencies that log raw protocol messages to
/// levels at which they do not.
pub const QUIET_DEPENDENCIES: &str =
    "rmcp=warn,rmcp::service::client=error,tungstenite=info,tokio_tungstenite=info";

/// `filter` (comma-separated `EnvFilter` directives) with its directives for the targets
/// of [`QUIET_DEPENDENCIES`] (and their sub-targets) replaced by those: verbose logging
/// stays verbose for everything else.
pub fn keeping_secrets(filter: &str) -> String {
    let quieted: Vec<&str> = QUIET_DEPENDENCIES
        .split(',')
        .filter_map(|directive| directive.split('=').next())
        .collect();
    let kept = filter
        .split(',')
        .map(str::trim)
        .filter(|directive| !directive.is_empty())
        .filter(|directive| !quieted.iter().any(|target| names(directive, target)));
    kept.chain(QUIET_DEPENDENCIES.split(','))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether `directive` names `target` or one of its sub-targets (`rmcp`, `rmcp::service`,
/// `rmcp[span]=debug`, ...).
fn names(directive: &str, target: &str) -> bool {
    let named = directive
        .split(['=', '['])
        .next()
        .unwrap_or_default()
        .trim();
    named == target || named.starts_with(&format!("{target}::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_directives_stay_and_the_dependencies_are_held() {
        assert_eq!(
            keeping_secrets("debug"),
            "debug,rmcp=warn,rmcp::service::client=error,tungstenite=info,tokio_tungstenite=info"
        );
        assert_eq!(
            keeping_secrets("warn, toolgate=trace ,rmcp::service=trace,rmcp[req]=debug,"),
            "warn,toolgate=trace,rmcp=warn,rmcp::service::client=error,tungstenite=info,tokio_tungstenite=info"
        );
        assert_eq!(
            keeping_secrets("rmcpx=debug"),
            "rmcpx=debug,rmcp=warn,rmcp::service::client=error,tungstenite=info,tokio_tungstenite=info"
        );
        assert_eq!(keeping_secrets(""), QUIET_DEPENDENCIES);
    }
}
