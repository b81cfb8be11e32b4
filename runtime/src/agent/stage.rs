//! Steps of the application's own around each model request of the agent loop: before the
//! request (to stop a run, e.g. at a budget) and after the response (to look at, change or
//! refuse what the model answered). The calls the model makes walk the registry's own
//! stages ([`crate::stage`]); these are the loop's.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::message::Message;
use super::model::ModelReply;
use super::run::{RunId, RunStatus};
use crate::caller::Caller;
use crate::definition::ToolDefinition;
use crate::usage::Usage;

/// One turn of a run as a [`ModelStage`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ModelTurn<'a> {
    /// Who the run is for: the caller presenting now.
    pub caller: &'a Caller,
    /// The run.
    pub run_id: &'a RunId,
    /// The turn's number in the run, from 1.
    pub turn: u32,
    /// The conversation so far (what the model is sent).
    pub transcript: &'a [Message],
    /// The tools offered this turn.
    pub tools: &'a [Arc<ToolDefinition>],
    /// Tokens the run used before this turn.
    pub usage: Usage,
}

/// What a [`ModelStage`] decided about a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnVerdict {
    /// Go on.
    Continue,
    /// Stop the run here, with [`RunStatus::Stopped`](super::RunStatus::Stopped) and this
    /// reason (the calls of a refused reply are not run).
    Stop {
        /// Why, for the run's owner.
        reason: String,
    },
}

/// A step of the agent loop around each model request, added with
/// [`AgentBuilder::model_stage`](super::AgentBuilder::model_stage); stages run in the order
/// they were added, and the first that stops the run ends it. A stage that panics stops the
/// run, naming itself.
///
/// ```
/// use toolgate::agent::{ModelStage, ModelTurn, TurnVerdict};
///
/// /// Stops a run once it has used 10,000 tokens.
/// struct TokenBudget;
///
/// impl ModelStage for TokenBudget {
///     fn name(&self) -> &str {
///         "token_budget"
///     }
///     fn before_request(&self, turn: &ModelTurn<'_>) -> TurnVerdict {
///         let used = turn.usage.input_tokens + turn.usage.output_tokens;
///         match used >= 10_000 {
///             true => TurnVerdict::Stop { reason: format!("{used} tokens used, of 10000") },
///             false => TurnVerdict::Continue,
///         }
///     }
/// }
/// ```
pub trait ModelStage: Send + Sync + 'static {
    /// The stage's name, for the run's status and the log.
    fn name(&self) -> &str;

    /// Before the model is asked. The default goes on.
    fn before_request(&self, turn: &ModelTurn<'_>) -> TurnVerdict {
        let _ = turn;
        TurnVerdict::Continue
    }

    /// After the model answered, before its reply is kept or its calls run: the stage may
    /// change the reply (`reply`), or stop the run. The default goes on.
    fn after_response(&self, turn: &ModelTurn<'_>, reply: &mut ModelReply) -> TurnVerdict {
        let _ = (turn, reply);
        TurnVerdict::Continue
    }
}

/// Walks the stages before a model request: the status to stop with, if one stops the run.
pub(crate) fn before_request(
    stages: &[Box<dyn ModelStage>],
    turn: &ModelTurn<'_>,
) -> Result<(), RunStatus> {
    for stage in stages {
        let verdict = contained(stage.as_ref(), || stage.before_request(turn));
        stopped(stage.as_ref(), verdict)?;
    }
    Ok(())
}

/// Walks the stages after a model response, each given the reply as the one before left it.
pub(crate) fn after_response(
    stages: &[Box<dyn ModelStage>],
    turn: &ModelTurn<'_>,
    reply: &mut ModelReply,
) -> Result<(), RunStatus> {
    for stage in stages {
        let verdict = contained(stage.as_ref(), || stage.after_response(turn, reply));
        stopped(stage.as_ref(), verdict)?;
    }
    Ok(())
}

/// The stage's verdict, or a stop naming it where it panicked (its panic goes to the log).
fn contained(stage: &dyn ModelStage, work: impl FnOnce() -> TurnVerdict) -> TurnVerdict {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(verdict) => verdict,
        Err(_) => {
            tracing::error!(
                stage = stage.name(),
                "a model stage panicked; the run stops"
            );
            TurnVerdict::Stop {
                reason: "the stage failed (an internal error)".into(),
            }
        }
    }
}

fn stopped(stage: &dyn ModelStage, verdict: TurnVerdict) -> Result<(), RunStatus> {
    match verdict {
        TurnVerdict::Continue => Ok(()),
        TurnVerdict::Stop { reason } => Err(RunStatus::Stopped {
            stage: stage.name().to_owned(),
            reason,
        }),
    }
}
