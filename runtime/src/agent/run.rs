//! A run: one conversation between a caller, the model and the tools, as the server keeps it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::{Message, ToolResult};
use super::model::ModelError;
use crate::call::ToolOutcome;
use crate::caller::Caller;
use crate::error::ToolError;
use crate::usage::Usage;

/// A run's id: random, unguessable, the only handle a client holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(String);

impl RunId {
    /// A new random id (128 bits, hex).
    pub fn new() -> Self {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
        RunId(crate::util::digest::hex_digest(&bytes))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether every store can look the id up: an id with a control character (NUL, which
    /// PostgreSQL cannot take) names no run anywhere.
    pub(crate) fn storable(&self) -> bool {
        !self.0.chars().any(char::is_control)
    }
}

impl Default for RunId {
    fn default() -> Self {
        RunId::new()
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for RunId {
    fn from(id: &str) -> Self {
        RunId(id.to_owned())
    }
}

impl From<String> for RunId {
    fn from(id: String) -> Self {
        RunId(id)
    }
}

/// Where a run stands. Every way a run stops is a status here, never only a log line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// The model answered without calling a tool.
    Finished {
        /// Its answer.
        text: String,
    },
    /// Calls wait for a person's decision ([`Agent::decide`](super::Agent::decide), or the
    /// registry's approval routes); then its owner goes on with
    /// [`Agent::resume`](super::Agent::resume).
    NeedsApproval {
        /// The waiting calls, in call order.
        pending: Vec<PendingApproval>,
    },
    /// Every call that waited was decided by someone else; the run goes on when its owner
    /// [resumes](super::Agent::resume) it, with the authority it has then.
    Decided,
    /// The model was called [`max_turns`](super::AgentBuilder::max_turns) times for this
    /// message without giving an answer.
    MaxTurns {
        /// The limit.
        turns: u32,
    },
    /// The model asked for more tool calls than
    /// [`max_tool_calls`](super::AgentBuilder::max_tool_calls) allows; those over the limit
    /// did not run.
    ToolCallLimit {
        /// The limit.
        calls: usize,
    },
    /// The [time budget](super::AgentBuilder::time_budget) ran out.
    TimeBudget {
        /// The budget, in milliseconds.
        budget_ms: u64,
    },
    /// Cancelled from outside ([`RunOptions::cancel`](super::RunOptions::cancel)).
    Cancelled,
    /// The model could not be asked (after retries), or answered something unreadable.
    ModelFailed {
        /// Why.
        error: ModelError,
    },
    /// The model's answer stopped at its output limit (`max_tokens`): `text` is what it
    /// wrote before, cut off.
    CutOff {
        /// The answer, as far as it got.
        text: String,
    },
    /// A [budget](crate::budget) of the caller or the run is spent: the model was not
    /// asked again, or a tool call was not run.
    BudgetExhausted {
        /// The budget's name.
        budget: String,
        /// What was used of it (money in the prices' currency).
        used: f64,
        /// Its ceiling.
        limit: f64,
    },
    /// A [model stage](super::ModelStage) stopped the run.
    Stopped {
        /// The stage's name.
        stage: String,
        /// Why.
        reason: String,
    },
}

/// What a person reads: how the run ended, in a sentence.
impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunStatus::Finished { .. } => f.write_str("finished"),
            RunStatus::NeedsApproval { pending } => {
                write!(f, "{} call(s) wait for a person's approval", pending.len())
            }
            RunStatus::Decided => f.write_str("every waiting call was decided; resume the run"),
            RunStatus::MaxTurns { turns } => {
                write!(f, "the model was asked {turns} times without answering")
            }
            RunStatus::ToolCallLimit { calls } => {
                write!(f, "the model asked for more than {calls} tool calls")
            }
            RunStatus::TimeBudget { budget_ms } => {
                write!(f, "the time budget of {budget_ms} ms ran out")
            }
            RunStatus::Cancelled => f.write_str("cancelled"),
            RunStatus::CutOff { .. } => f.write_str(
                "the model's answer stopped at its output limit: raise its `max_tokens`, or ask for a shorter answer",
            ),
            RunStatus::ModelFailed { error } => write!(f, "the model failed: {error}"),
            RunStatus::BudgetExhausted {
                budget,
                used,
                limit,
            } => write!(f, "the budget `{budget}` is spent ({used} of {limit} used)"),
            RunStatus::Stopped { stage, reason } => write!(f, "stopped by `{stage}`: {reason}"),
        }
    }
}

impl RunStatus {
    /// The status's name, as on the wire (`finished`, `needs_approval`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::Finished { .. } => "finished",
            RunStatus::NeedsApproval { .. } => "needs_approval",
            RunStatus::Decided => "decided",
            RunStatus::MaxTurns { .. } => "max_turns",
            RunStatus::ToolCallLimit { .. } => "tool_call_limit",
            RunStatus::TimeBudget { .. } => "time_budget",
            RunStatus::Cancelled => "cancelled",
            RunStatus::ModelFailed { .. } => "model_failed",
            RunStatus::BudgetExhausted { .. } => "budget_exhausted",
            RunStatus::CutOff { .. } => "cut_off",
            RunStatus::Stopped { .. } => "stopped",
        }
    }

    /// Whether the run waits on people: for decisions, or for its owner to go on after
    /// them. Such a run takes no new message, and stores keep it longer.
    pub(crate) fn waits(&self) -> bool {
        matches!(self, RunStatus::NeedsApproval { .. } | RunStatus::Decided)
    }
}

/// A call waiting for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The model's id for the call (what a [`CallDecision`] names).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments, `#[secret]` ones redacted.
    pub arguments: Value,
    /// Why the policy wants approval.
    pub reason: String,
    /// The signed ticket an approver may also redeem through
    /// [`Registry::approve`](crate::Registry::approve) (or the HTTP approval routes).
    pub ticket: String,
    /// The ticket's id.
    pub ticket_id: String,
    /// When the ticket expires, seconds since the Unix epoch.
    pub expires: u64,
}

/// A person's decision about one waiting call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallDecision {
    /// The call's id, as in [`PendingApproval::call_id`].
    pub call_id: String,
    /// Approve or deny.
    #[serde(flatten)]
    pub decision: Decision,
}

/// What came of [`Agent::decide`](super::Agent::decide): the decided calls' outcomes, not
/// the owner's conversation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Decided {
    /// The run.
    pub run_id: RunId,
    /// What came of each call decided here, in the order decided: the result of an approved
    /// call that ran, or its refusal.
    pub outcomes: Vec<ToolOutcome>,
    /// Calls of the run still waiting for someone's decision.
    pub still_waiting: usize,
}

/// Approve or deny.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run the call as the model asked.
    Approve,
    /// Do not run it; the model reads the reason.
    Deny {
        /// Why.
        reason: String,
    },
}

impl CallDecision {
    /// Approve the call `call_id`.
    pub fn approve(call_id: impl Into<String>) -> Self {
        CallDecision {
            call_id: call_id.into(),
            decision: Decision::Approve,
        }
    }

    /// Deny the call `call_id`, saying why.
    pub fn deny(call_id: impl Into<String>, reason: impl Into<String>) -> Self {
        CallDecision {
            call_id: call_id.into(),
            decision: Decision::Deny {
                reason: reason.into(),
            },
        }
    }
}

/// One tool call a run made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The model call (turn) that asked for it, counting from 1 over the whole run.
    pub turn: u32,
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments as the model wrote them, `#[secret]` ones redacted (`null` when they
    /// did not parse).
    pub arguments: Value,
    /// What the model read: the result (cut to the size limit) or the error.
    pub result: Result<Value, ToolError>,
    /// How long the call took, in milliseconds (until its outcome; for an approved call,
    /// its run after the decision).
    pub duration_ms: f64,
}

/// A slot of the turn that waits: a result already known, or a call waiting for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "slot", rename_all = "snake_case")]
pub(crate) enum Slot {
    Done(ToolResult),
    Waiting(PendingApproval),
}

/// A run as the server keeps it, and as [`Agent::run`](super::Agent::run) returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub(crate) id: RunId,
    pub(crate) caller: Caller,
    pub(crate) status: RunStatus,
    pub(crate) transcript: Vec<Message>,
    pub(crate) calls: Vec<CallRecord>,
    pub(crate) usage: Usage,
    /// Model calls over the whole run.
    pub(crate) turns: u32,
    /// Model calls and tool calls since the last user message (what the limits count).
    pub(crate) exchange_turns: u32,
    pub(crate) exchange_calls: usize,
    /// The turn waiting for decisions, in call order.
    #[serde(default)]
    pub(crate) waiting: Vec<Slot>,
    /// The marker of the envelopes the run's untrusted results are sent in (a run kept by
    /// an older version gets a new one).
    #[serde(default = "super::envelope::new_marker")]
    pub(crate) marker: String,
    /// Whether the model was sent a result in an envelope (the system prompt then says what
    /// envelopes are, every turn after).
    #[serde(default)]
    pub(crate) enveloped: bool,
    /// Whether every call of the last turn repeated an earlier one: the model has what it
    /// asked for, and its next request is sent without tools, for an answer.
    #[serde(default)]
    pub(crate) only_repeats: bool,
}

impl Run {
    pub(crate) fn new(id: RunId, caller: Caller) -> Self {
        Run {
            id,
            caller,
            status: RunStatus::Cancelled,
            transcript: Vec::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            turns: 0,
            exchange_turns: 0,
            exchange_calls: 0,
            waiting: Vec::new(),
            marker: super::envelope::new_marker(),
            enveloped: false,
            only_repeats: false,
        }
    }

    /// The run's id.
    pub fn id(&self) -> &RunId {
        &self.id
    }

    /// Whom the run is for (its calls run as this caller).
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// Where it stands.
    pub fn status(&self) -> &RunStatus {
        &self.status
    }

    /// The model's answer, if the run finished (as far as it got, if it was cut off).
    pub fn text(&self) -> Option<&str> {
        match &self.status {
            RunStatus::Finished { text } | RunStatus::CutOff { text } => Some(text),
            _ => None,
        }
    }

    /// The calls waiting for a person, if any.
    pub fn pending(&self) -> &[PendingApproval] {
        match &self.status {
            RunStatus::NeedsApproval { pending } => pending,
            _ => &[],
        }
    }

    /// The conversation, as the model read it.
    pub fn transcript(&self) -> &[Message] {
        &self.transcript
    }

    /// Every tool call made, in order.
    pub fn calls(&self) -> &[CallRecord] {
        &self.calls
    }

    /// Tokens used over the whole run.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Model calls over the whole run.
    pub fn turns(&self) -> u32 {
        self.turns
    }
}
