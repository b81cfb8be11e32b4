//! What happens to calls and agent runs, as a stream a UI can follow.
//!
//! Every [`Registry`](crate::Registry) has one event stream
//! ([`Registry::events`](crate::Registry::events)): calls made directly, over HTTP or MCP,
//! and by an [`Agent`](crate::agent::Agent) all report here, each event naming its caller
//! and, for an agent's calls, its run. Events are for watching; the audit trail is the
//! record. A subscriber that falls far behind misses events (it is told how many) rather
//! than slowing calls down.
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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::error::ToolError;

/// How many events a subscriber may fall behind before it misses some.
const CAPACITY: usize = 1024;

/// One thing that happened.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
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
    /// An agent run stopped: finished, waiting for approval, or at a limit.
    RunFinished {
        /// The run's status (see [`RunStatus`](crate::agent::RunStatus)).
        status: Value,
    },
}

/// Sees the approvals' events on the calling task, as they are published (e.g. to note them
/// on the call's span): keep it quick.
pub(crate) type Watcher = Box<dyn Fn(&Event) + Send + Sync>;

/// The registry's event channel.
pub(crate) struct EventBus {
    sender: broadcast::Sender<Arc<Event>>,
    /// Whether anyone ever subscribed: until then, a call does not even look (counting the
    /// receivers takes a lock).
    subscribed: AtomicBool,
    /// Sees the approvals' events as they happen, on the calling task.
    watcher: Option<Watcher>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            sender: broadcast::Sender::new(CAPACITY),
            subscribed: AtomicBool::new(false),
            watcher: None,
        }
    }
}

impl EventBus {
    /// The channel, with `watcher` seeing the approvals' events (the telemetry's).
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) fn watched_by(watcher: Watcher) -> Self {
        EventBus {
            watcher: Some(watcher),
            ..EventBus::default()
        }
    }

    /// Sends an event, made only when someone listens (calls pay nothing otherwise: the
    /// check is inlined where a call passes, the sending is not).
    #[inline]
    pub(crate) fn publish(&self, make: impl FnOnce() -> (String, Option<String>, EventKind)) {
        if self.listened() {
            self.send(make(), false);
        }
    }

    /// Sends an approval's event (a person asked, or answering), which the watcher sees too.
    pub(crate) fn publish_approval(
        &self,
        make: impl FnOnce() -> (String, Option<String>, EventKind),
    ) {
        if self.watcher.is_some() || self.listened() {
            self.send(make(), true);
        }
    }

    #[inline]
    fn listened(&self) -> bool {
        self.subscribed.load(Ordering::Acquire) && self.sender.receiver_count() > 0
    }

    #[inline(never)]
    fn send(&self, (caller, run, kind): (String, Option<String>, EventKind), watched: bool) {
        let event = Event {
            time_ms: crate::util::time::now_millis(),
            caller,
            run,
            kind,
        };
        if let Some(watcher) = self.watcher.as_ref().filter(|_| watched) {
            watcher(&event);
        }
        // No receiver left since the check: nothing to do.
        if self.sender.receiver_count() > 0 {
            let _ = self.sender.send(Arc::new(event));
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.subscribed.store(true, Ordering::Release);
        self.sender.subscribe()
    }
}
