//! How far a running call is, for whoever asked to hear it: a tool reports with
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
