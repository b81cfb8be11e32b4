//! What happens to calls and agent runs, as a stream a UI can follow.
//!
//! Every [`Registry`](crate::Registry) has one event stream
//! ([`Registry::events`](crate::Registry::events)): calls made directly, over HTTP or MCP,
//! and by an [`Agent`](crate::agent::Agent) all report here, each event naming its caller
//! and, for an agent's calls, its run. Events are for watching; the audit trail is the
//! record. A subscriber that falls far behind misses events (it is told how many) rather
//! than slowing calls down.
//!
//! **Several instances.** A registry whose [stores](crate::store::Stores) are a database
//! (SQLite or PostgreSQL) shares, through its [`EventLog`], what people act on: approvals
//! requested and decided, calls and runs finished, budgets spent. Each instance writes its
//! events there (in batches, off the calls' path) and follows the others' (PostgreSQL tells
//! it with `LISTEN`/`NOTIFY`, whose notifications carry only an id; SQLite is looked at
//! ten times a second), so a subscriber on any instance hears of them, filtered by the same
//! rules as its own instance's. A follower whose connection drops catches up from the log
//! once it is back, each event once. The model's streamed words stay on the instance that
//! runs the model.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use toolgate::events::EventKind;
//! use toolgate::{Caller, Registry, ToolCall};
//!
//! let registry = Registry::builder().roles(["public"]).build().unwrap();
//! let mut events = registry.events();
//! let caller = Caller::new("u1", "public");
//! registry.call(&caller, ToolCall::new("1", "nope", "{}")).await;
//! let event = events.recv().await.unwrap();
//! assert_eq!(event.caller, "u1");
//! assert!(matches!(&event.kind, EventKind::CallFinished { ok: false, .. }));
//! # }
//! ```

mod bus;
mod log;
mod relay;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) use bus::EventBus;
#[cfg(feature = "otel")]
pub(crate) use bus::Watcher;
pub use log::{EventLog, LoggedEvent};

use crate::error::ToolError;

/// One thing that happened.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The id of the caller the call or run is for.
    pub caller: String,
    /// The agent run it belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened, with `"type"` naming it on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A valid call of a visible tool reached the policy.
    CallRequested {
        /// The call's id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The arguments, `#[secret]` ones redacted.
        arguments: Value,
        /// Whether a person must approve it before it runs.
        needs_approval: bool,
    },
    /// A person is asked (in process), or the call waits with a ticket.
    ApprovalRequested {
        /// The call's id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The arguments, `#[secret]` ones redacted.
        arguments: Value,
        /// Why the policy wants approval.
        reason: String,
        /// What the tool says the call will do.
        #[serde(skip_serializing_if = "Option::is_none")]
        review: Option<Value>,
        /// The ticket that decides it later, when no one is asked in process.
        #[serde(skip_serializing_if = "Option::is_none")]
        ticket: Option<String>,
    },
    /// A person (or approver) decided.
    ApprovalDecided {
        /// The call's id.
        call_id: String,
        /// The tool.
        tool: String,
        /// Who decided.
        decided_by: String,
        /// `approved`, `approved_always`, `approved_edited` or `approval_denied`.
        decision: String,
    },
    /// A call ended, whatever happened to it.
    CallFinished {
        /// The call's id.
        call_id: String,
        /// The tool.
        tool: String,
        /// Whether it succeeded.
        ok: bool,
        /// The result, on success.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// The error, on failure.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ToolError>,
        /// How long it took, in milliseconds.
        duration_ms: f64,
        /// The UI component that renders the result (`#[tool(ui = "...")]`), if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        ui: Option<String>,
    },
    /// An agent asks its model (turn `turn`, counting from 1).
    ModelRequest {
        /// The model call's number within the run.
        turn: u32,
        /// How many tools the model was shown.
        tools: usize,
    },
    /// Text the model is writing, as it streams.
    TextDelta {
        /// The model call's number within the run.
        turn: u32,
        /// The new text.
        text: String,
    },
    /// Part of a tool call the model is writing, as it streams.
    ToolCallDelta {
        /// The model call's number within the run.
        turn: u32,
        /// Which call of the turn.
        index: usize,
        /// The call's id, once known.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool's name, once known.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The next piece of the arguments' JSON text.
        arguments: String,
    },
    /// The model answered.
    ModelResponse {
        /// The model call's number within the run.
        turn: u32,
        /// Its text, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The tools it called, in order.
        calls: Vec<String>,
        /// Tokens read and written, as the provider reported them.
        usage: crate::usage::Usage,
    },
    /// A [budget](crate::budget) of the caller or run is spent: a tool call or a model
    /// request was refused for it.
    BudgetExhausted {
        /// The budget's name.
        budget: String,
        /// What was used of it.
        used: f64,
        /// Its ceiling.
        limit: f64,
    },
    /// A device connected to the hub ([`devices`](crate::devices)); the event's caller is
    /// `device:<id>`.
    DeviceOnline {
        /// The device's id.
        device: String,
        /// The hub's names of the tools it offers.
        tools: Vec<String>,
    },
    /// A device's link to the hub closed.
    DeviceOffline {
        /// The device's id.
        device: String,
        /// Why: `disconnected`, `replaced` (it connected again) or `revoked`.
        reason: String,
        /// The hub's names of the tools it offered.
        tools: Vec<String>,
    },
    /// An agent run stopped: finished, waiting for approval, or at a limit.
    RunFinished {
        /// The run's status (see [`RunStatus`](crate::agent::RunStatus)).
        status: Value,
    },
}

impl EventKind {
    /// Whether the other instances sharing the registry's [`EventLog`] hear of it: what
    /// people act on (approvals, finished calls and runs, spent budgets), not the stream of
    /// a model's words.
    fn crosses_instances(&self) -> bool {
        matches!(
            self,
            EventKind::ApprovalRequested { .. }
                | EventKind::ApprovalDecided { .. }
                | EventKind::CallFinished { .. }
                | EventKind::BudgetExhausted { .. }
                | EventKind::RunFinished { .. }
        )
    }
}
