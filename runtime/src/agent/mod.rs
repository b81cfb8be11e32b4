//! The agent loop: a model in conversation with the registry's tools.
//!
//! The user writes, the model calls tools, the registry runs them (as the run's caller, with
//! the same roles, validation, policy, approval, rate limits and audit as every other call),
//! the results go back to the model, and so on until it answers. A call that needs a person's
//! approval either asks the registry's in-process [`Approver`](crate::approval::Approver)
//! (a terminal prompt), or stops the run: [`RunStatus::NeedsApproval`] lists the waiting
//! calls; approvers decide them ([`Agent::decide`], which runs an approved call once), and
//! the run's owner goes on with [`Agent::resume`], with the authority it presents then.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use toolgate::agent::{Agent, Message, Model, ModelFuture, ModelReply, ModelRequest};
//! use toolgate::{Caller, Registry};
//!
//! /// A stand-in model that always answers the same (a real one is in `agent::models`).
//! struct Parrot;
//! impl Model for Parrot {
//!     fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
//!         let heard = match request.messages.last() {
//!             Some(Message::User { text }) => text.clone(),
//!             _ => String::new(),
//!         };
//!         Box::pin(async move { Ok(ModelReply { text: Some(heard), ..ModelReply::default() }) })
//!     }
//! }
//!
//! let registry = Registry::builder().roles(["public"]).build().unwrap();
//! let agent = Agent::builder(registry, Parrot).system("Be brief.").max_turns(4).build();
//! let run = agent.run(&Caller::new("u1", "public"), "hello").await.unwrap();
//! assert_eq!(run.text(), Some("hello"));
//! # }
//! ```
//!
//! Limits count per user message (a [`run`](Agent::run) or a [`follow_up`](Agent::follow_up),
//! with the resumes after its approvals): [`max_turns`](AgentBuilder::max_turns) counts
//! **model calls** (not "steps", not tool calls), [`max_tool_calls`](AgentBuilder::max_tool_calls)
//! counts tool calls. The [time budget](AgentBuilder::time_budget) counts per invocation, so
//! the time a person takes to decide is not counted.

mod builder;
pub mod commands;
mod driver;
mod envelope;
mod example;
mod free_text;
mod message;
mod model;
#[cfg(feature = "models")]
#[cfg_attr(docsrs, doc(cfg(feature = "models")))]
pub mod models;
mod plan;
mod resume;
mod run;
mod spend;
mod stage;
mod store;
#[cfg(feature = "otel")]
mod traced;

use std::sync::Arc;

pub use crate::usage::Usage;
pub use builder::{AgentBuilder, ToolSelector};
pub use example::{Example, ExampleCall};
pub use free_text::FreeText;
pub use message::{Message, ModelCall, ToolResult};
pub use model::{Delta, Model, ModelError, ModelErrorKind, ModelFuture, ModelReply, ModelRequest};
pub use run::{
    CallDecision, CallRecord, Decided, Decision, PendingApproval, Run, RunId, RunStatus,
};
pub use stage::{ModelStage, ModelTurn, TurnVerdict};
pub use store::{MemoryRunStore, RunStore};

use crate::approval::TicketError;
use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::registry::Registry;
use crate::store_error::StoreError;
use builder::Settings;

/// A model with the registry's tools, for any number of runs. Cheap to clone.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Settings>,
}

/// Settings of one invocation.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Cancelling it stops the run (calls running end `cancelled`; the status is
    /// [`RunStatus::Cancelled`]).
    pub cancel: Option<CancellationToken>,
    /// The id for a new run, e.g. to subscribe to its events before it starts.
    pub id: Option<RunId>,
    /// Messages before the user's (an earlier conversation, or worked examples for a small
    /// model), for a new run. A [`Message::ToolResults`] must follow the assistant message
    /// whose calls it answers, as in any transcript.
    pub history: Vec<Message>,
}

/// Why a run could not be started or resumed. (How a run ends is its [`RunStatus`].)
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentError {
    /// No such run is kept for this caller (or it is being resumed right now).
    RunNotFound,
    /// The run is not waiting for approval: its status is given.
    NotWaiting {
        /// The run's status name.
        status: &'static str,
    },
    /// A decision names a call that is not waiting in this run.
    UnknownCall {
        /// The call id given.
        call_id: String,
    },
    /// The registry refused a decision (the decider may not decide it, or its ticket is used
    /// or forged); the decisions before it were applied, the run still waits.
    Decision {
        /// The call.
        call_id: String,
        /// Why.
        error: TicketError,
    },
    /// A new run was given the id of one that exists.
    DuplicateId,
    /// The run waits for approval of its calls: resume it before writing to it again.
    AwaitingApproval,
    /// The run store could not be reached.
    Store(StoreError),
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::RunNotFound => {
                f.write_str("no such run is waiting for you (or it is being resumed right now)")
            }
            AgentError::NotWaiting { status } => {
                write!(
                    f,
                    "the run is not waiting for approval (its status is `{status}`)"
                )
            }
            AgentError::UnknownCall { call_id } => {
                write!(f, "no call `{call_id}` is waiting for approval in this run")
            }
            AgentError::Decision { call_id, error } => {
                write!(
                    f,
                    "the decision about call `{call_id}` was refused: {error}"
                )
            }
            AgentError::DuplicateId => f.write_str("a run with this id exists already"),
            AgentError::AwaitingApproval => f.write_str(
                "the run is waiting on decisions about its calls; resume it (once they are decided) before sending another message",
            ),
            AgentError::Store(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for AgentError {}

impl Agent {
    /// Starts configuring an agent over `registry`'s tools, talking to `model`.
    pub fn builder(registry: Registry, model: impl Model) -> AgentBuilder {
        AgentBuilder::new(registry, Arc::new(model))
    }

    /// The registry whose tools the agent uses.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// Starts a run for `caller` with the user's message and runs it until the model answers,
    /// a call waits for approval, or a limit is reached.
    pub async fn run(&self, caller: &Caller, input: impl Into<String>) -> Result<Run, AgentError> {
        self.run_with(caller, input, RunOptions::default()).await
    }

    /// [`run`](Self::run) with options: cancellation, or a chosen id.
    pub async fn run_with(
        &self,
        caller: &Caller,
        input: impl Into<String>,
        options: RunOptions,
    ) -> Result<Run, AgentError> {
        let id = options.id.clone().unwrap_or_default();
        if self
            .inner
            .store
            .get(&id)
            .await
            .map_err(AgentError::Store)?
            .is_some()
        {
            return Err(AgentError::DuplicateId);
        }
        let mut run = Run::new(id, caller.clone());
        run.transcript.extend(options.history.iter().cloned());
        run.transcript.push(Message::User { text: input.into() });
        driver::drive(&self.inner, run, &options).await
    }

    /// The caller's next message in a run that stopped (finished, or at a limit): the
    /// conversation goes on with the same transcript, and the limits count afresh.
    pub async fn follow_up(
        &self,
        caller: &Caller,
        id: &RunId,
        input: impl Into<String>,
        options: RunOptions,
    ) -> Result<Run, AgentError> {
        let mut run = resume::take_own(&self.inner, caller, id).await?;
        if run.status.waits() {
            self.inner.store.put(run).await.map_err(AgentError::Store)?;
            return Err(AgentError::AwaitingApproval);
        }
        run.transcript.push(Message::User { text: input.into() });
        run.exchange_turns = 0;
        run.exchange_calls = 0;
        driver::drive(&self.inner, run, &options).await
    }

    /// The run's owner goes on with a run that waited for decisions, with the authority it
    /// presents now (`owner`'s id must be the run's; its role may have changed since, and a
    /// call still waiting for a tool that role may not see is withdrawn and answered as an
    /// unknown tool). `decisions` are the owner's own (the registry checks it may decide
    /// them); calls decided meanwhile ([`decide`](Self::decide), [`Registry::approve`], the
    /// HTTP approval routes) are taken as decided. When no call waits any more, the turn's
    /// results go to the model and the run goes on. To anyone but its owner there is no
    /// such run.
    pub async fn resume(
        &self,
        owner: &Caller,
        id: &RunId,
        decisions: impl IntoIterator<Item = CallDecision>,
    ) -> Result<Run, AgentError> {
        let decisions: Vec<CallDecision> = decisions.into_iter().collect();
        resume::resume(&self.inner, owner, id, decisions, &RunOptions::default()).await
    }

    /// [`resume`](Self::resume) with options.
    pub async fn resume_with(
        &self,
        owner: &Caller,
        id: &RunId,
        decisions: Vec<CallDecision>,
        options: RunOptions,
    ) -> Result<Run, AgentError> {
        resume::resume(&self.inner, owner, id, decisions, &options).await
    }

    /// An approver decides calls waiting in a run, through the registry
    /// ([`Registry::approve`]/[`Registry::deny`]: it may decide only calls of tools at or
    /// below its role); an approved call runs once, as the caller who made it. The approver
    /// learns what came of its decisions, never the owner's conversation; the run then
    /// waits for its owner to [`resume`](Self::resume) it. Someone who may decide none of the
    /// run's waiting calls gets [`AgentError::RunNotFound`], as for a run that does not
    /// exist.
    pub async fn decide(
        &self,
        who: &Caller,
        id: &RunId,
        decisions: impl IntoIterator<Item = CallDecision>,
    ) -> Result<Decided, AgentError> {
        let decisions: Vec<CallDecision> = decisions.into_iter().collect();
        resume::decide(&self.inner, who, id, decisions).await
    }

    /// A run of `caller`'s, as it stands.
    pub async fn get(&self, caller: &Caller, id: &RunId) -> Result<Option<Run>, AgentError> {
        if !id.storable() {
            return Ok(None);
        }
        let run = self.inner.store.get(id).await.map_err(AgentError::Store)?;
        Ok(run.filter(|run| run.caller.id() == caller.id()))
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("registry", &self.inner.registry)
            .field("max_turns", &self.inner.max_turns)
            .finish_non_exhaustive()
    }
}
