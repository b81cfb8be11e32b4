//! Configuring an agent.

use std::sync::Arc;
use std::time::Duration;

use super::Agent;
use super::message::Message;
use super::model::Model;
use super::stage::ModelStage;
use super::store::{MemoryRunStore, RunStore};
use crate::caller::Caller;
use crate::definition::ToolDefinition;
use crate::registry::{Registry, ToolList};

/// Picks the tools shown to the model for one turn, among those the caller may use (e.g.
/// by searching them for the last user message). Implemented for closures
/// `Fn(&Caller, &[Message], &ToolList) -> Vec<Arc<ToolDefinition>>`.
///
/// A selector narrows what the model is shown, to keep prompts small; it cannot widen it:
/// a tool the caller may not use is dropped from its choice, and a call is always checked
/// against the caller's role by the registry.
pub trait ToolSelector: Send + Sync + 'static {
    /// The tools for this turn.
    fn select(
        &self,
        caller: &Caller,
        transcript: &[Message],
        visible: &ToolList,
    ) -> Vec<Arc<ToolDefinition>>;
}

impl<F> ToolSelector for F
where
    F: Fn(&Caller, &[Message], &ToolList) -> Vec<Arc<ToolDefinition>> + Send + Sync + 'static,
{
    fn select(
        &self,
        caller: &Caller,
        transcript: &[Message],
        visible: &ToolList,
    ) -> Vec<Arc<ToolDefinition>> {
        self(caller, transcript, visible)
    }
}

/// What an agent is made of.
pub(crate) struct Settings {
    pub(crate) registry: Registry,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) system: Option<String>,
    pub(crate) max_turns: u32,
    pub(crate) max_tool_calls: usize,
    pub(crate) time_budget: Option<Duration>,
    pub(crate) result_limits: crate::ResultLimits,
    pub(crate) selector: Option<Box<dyn ToolSelector>>,
    pub(crate) store: Arc<dyn RunStore>,
    pub(crate) stages: Vec<Box<dyn ModelStage>>,
    /// Example exchanges shown before every conversation, as the model reads them (made
    /// once, here): the tools each calls, and its messages.
    pub(crate) examples: Vec<(Vec<String>, Vec<super::Message>)>,
}

/// Configures an [`Agent`]; from [`Agent::builder`].
pub struct AgentBuilder {
    settings: Settings,
}

impl AgentBuilder {
    pub(crate) fn new(registry: Registry, model: Arc<dyn Model>) -> Self {
        AgentBuilder {
            settings: Settings {
                registry,
                model,
                system: None,
                max_turns: 10,
                max_tool_calls: 50,
                time_budget: None,
                result_limits: crate::ResultLimits {
                    max_text_bytes: 32 * 1024,
                    max_media_bytes: 4 * 1024 * 1024,
                    max_blocks: 64,
                },
                selector: None,
                store: Arc::new(MemoryRunStore::default()),
                stages: Vec::new(),
                examples: Vec::new(),
            },
        }
    }

    /// The system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.settings.system = Some(prompt.into());
        self
    }

    /// Most **model calls** to answer one user message (default 10), counting those after an
    /// approval. Reaching it ends the run with [`RunStatus::MaxTurns`](super::RunStatus::MaxTurns).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.settings.max_turns = turns.max(1);
        self
    }

    /// Most tool calls to answer one user message (default 50). Calls over it do not run
    /// (the model reads why) and the run ends with
    /// [`RunStatus::ToolCallLimit`](super::RunStatus::ToolCallLimit).
    pub fn max_tool_calls(mut self, calls: usize) -> Self {
        self.settings.max_tool_calls = calls;
        self
    }

    /// Most wall-clock time for one invocation (`run`, `follow_up` or `resume`); none by
    /// default. Calls still running when it ends are cancelled, and the run ends with
    /// [`RunStatus::TimeBudget`](super::RunStatus::TimeBudget).
    pub fn time_budget(mut self, budget: Duration) -> Self {
        self.settings.time_budget = Some(budget);
        self
    }

    /// Largest tool result fed to the model, in bytes of its text (default 32 KiB): a longer
    /// one is cut, with a marker saying how much was left out. For content results, the
    /// text over all blocks (see [`result_limits`](Self::result_limits)).
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.settings.result_limits.max_text_bytes = bytes;
        self
    }

    /// Bounds on a tool result fed to the model, whatever it holds (default: 32 KiB of text,
    /// 4 MiB of media, 64 blocks). What does not fit is left out, with a note saying what;
    /// the run's record keeps what the model read. The registry's own
    /// [`result_limits`](crate::RegistryBuilder::result_limits) apply first.
    pub fn result_limits(mut self, limits: crate::ResultLimits) -> Self {
        self.settings.result_limits = limits;
        self
    }

    /// Shows the model only the tools `selector` picks each turn.
    pub fn select_tools(mut self, selector: impl ToolSelector) -> Self {
        self.settings.selector = Some(Box::new(selector));
        self
    }

    /// Where runs are kept (in memory by default); a persistent store lets runs waiting for
    /// approval survive a restart.
    pub fn run_store(mut self, store: impl RunStore) -> Self {
        self.settings.store = Arc::new(store);
        self
    }

    /// Adds a step around each model request, after those added before it (see
    /// [`ModelStage`]).
    pub fn model_stage(mut self, stage: impl ModelStage) -> Self {
        self.settings.stages.push(Box::new(stage));
        self
    }

    /// Shows the model this example exchange before every conversation (after the system
    /// prompt), when the caller is offered every tool it calls; see [`Example`](super::Example).
    /// Small models that never call a tool unprompted learn from examples.
    pub fn example(mut self, example: super::Example) -> Self {
        let number = self.settings.examples.len() + 1;
        let tools = example.tools().map(str::to_owned).collect();
        self.settings
            .examples
            .push((tools, example.messages(number)));
        self
    }

    /// The agent.
    pub fn build(self) -> Agent {
        Agent {
            inner: Arc::new(self.settings),
        }
    }
}
