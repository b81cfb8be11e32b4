//! What a running call tells whoever asked to hear it: how far it is, and log messages.
//!
//! How far: a tool reports with
//! [`ToolContext::progress`](crate::ToolContext::progress); the caller's
//! [`CallOptions::progress`](crate::CallOptions::progress) receives the reports (the MCP
//! server sends them as progress notifications to a client that gave a progress token).
//! Nobody listening costs a tool nothing.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use std::sync::{Arc, Mutex};
//! use toolgate::progress::{Progress, ProgressSink};
//! use toolgate::prelude::*;
//! use toolgate::CallOptions;
//!
//! /// Count to three, saying how far it got.
//! #[tool(permission = "public")]
//! async fn count(#[ctx] context: ToolContext) -> u32 {
//!     for step in 1..=3 {
//!         context.progress(f64::from(step), Some(3.0), format!("step {step}"));
//!     }
//!     3
//! }
//!
//! let registry = Registry::builder().roles(["public"]).filter_linked(|t| t.name == "count").build().unwrap();
//! let heard = Arc::new(Mutex::new(Vec::new()));
//! let sink = {
//!     let heard = Arc::clone(&heard);
//!     ProgressSink::new(move |report: Progress| heard.lock().unwrap().push(report.done))
//! };
//! let options = CallOptions { progress: Some(sink), ..CallOptions::default() };
//! let caller = Caller::new("u", "public");
//! registry.call_with(&caller, ToolCall::new("1", "count", "{}"), options).await;
//! assert_eq!(*heard.lock().unwrap(), [1.0, 2.0, 3.0]);
//! # }
//! ```

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

/// One report: `done` of `total` (when known), with a message for people.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// How much is done; should grow with every report.
    pub done: f64,
    /// How much there is in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is happening, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where a call's progress reports go.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressSink {
    /// Reports go to `receive`, in the order the tool makes them. It is called on the
    /// tool's own task, so it should only hand the report on (to a channel, say).
    pub fn new(receive: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressSink(Arc::new(receive))
    }

    pub(crate) fn report(&self, progress: Progress) {
        (self.0)(progress);
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// How much a log message matters (the syslog levels MCP uses), least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Information.
    Info,
    /// Normal but worth noticing.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A part is failing.
    Critical,
    /// Act at once.
    Alert,
    /// Nothing works.
    Emergency,
}

impl LogLevel {
    /// The level of a name (`"info"`, `"warning"`, ...).
    pub fn parse(name: &str) -> Option<Self> {
        use LogLevel::*;
        [
            Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency,
        ]
        .into_iter()
        .find(|level| level.name() == name)
    }

    /// The level's name, as MCP writes it.
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// A message a tool logs for its caller's client
/// ([`ToolContext::log`](crate::ToolContext::log)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogMessage {
    /// How much it matters.
    pub level: LogLevel,
    /// What it says: text, or any JSON.
    pub data: serde_json::Value,
}

/// Where a call's log messages go (the MCP server sends them as `notifications/message` to
/// a client that asked for a log level).
#[derive(Clone)]
pub struct LogSink(Arc<dyn Fn(LogMessage) + Send + Sync>);

impl LogSink {
    /// Messages go to `receive`, in order, on the tool's own task.
    pub fn new(receive: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        LogSink(Arc::new(receive))
    }

    pub(crate) fn log(&self, message: LogMessage) {
        (self.0)(message);
    }
}

impl fmt::Debug for LogSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LogSink")
    }
}
