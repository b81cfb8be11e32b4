//! Workflows: tools made of other tools. A workflow is a tool of its own (name, description,
//! parameters, permission, risk) whose steps call other tools with arguments built from the
//! workflow's parameters and earlier steps' results (see [the expressions](self#expressions)),
//! once or for each element of a list, when a condition holds, stopping or going on when a
//! step fails. Every step runs through the registry **as the caller of the workflow**: roles,
//! validation, approval, rate limits, budgets and audit apply to each step as if the model
//! had called it, so a workflow never reaches a tool its caller cannot (a step of a tool the
//! caller may not see fails exactly as a call of an unknown tool).
//!
//! A step that waits for a person's approval makes the workflow wait with it: the workflow's
//! call answers `approval_required` with the step's ticket, and where the run is is kept
//! with the step ([`StepOf`]). Once an approver decides, on whichever instance, the step runs
//! (or is refused) and the workflow goes on from there ([`Tool::go_on`](crate::Tool::go_on)),
//! once; its outcome is the approver's answer and what an agent run waiting on it reads.
//!
//! # Expressions
//!
//! `${params.topic}` is a workflow argument, `${steps.search}` a step's result (a
//! `for_each` step's is the list of its results), `${item}` the element a `for_each` step is
//! at; paths go on with `.key`, `[n]` and `[*]` (`${steps.search.results[*].title}`: every
//! result's title). A string that is one `${...}` becomes the value itself; in a longer
//! string each is written as text. A `when` condition holds unless its value is null, false,
//! 0, empty, or it starts with `!` and would hold.
//!
//! ```
//! use serde_json::json;
//! use toolgate::workflow::{Step, Workflow};
//! use toolgate::{Caller, FnTool, Registry, ToolCall, ToolDefinition};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let registry = Registry::builder().roles(["public"]).build().unwrap();
//! let search = ToolDefinition::new("search", "Search news.", "public", json!({"type": "object"}));
//! registry.register(FnTool::new(search, |_, _| async {
//!     Ok(json!({"results": [{"title": "A"}, {"title": "B"}]}))
//! })).unwrap();
//! let task = ToolDefinition::new("create_task", "Create a task.", "public",
//!     json!({"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}));
//! registry.register(FnTool::new(task, |_, arguments| async move {
//!     Ok(json!(format!("task: {}", arguments["title"].as_str().unwrap_or_default())))
//! })).unwrap();
//!
//! let definition = ToolDefinition::new("news_to_tasks", "A task per news item.", "public",
//!     json!({"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}));
//! let workflow = Workflow::new(definition, vec![
//!     Step::new("search", "search", json!({"query": "${params.topic}"})),
//!     Step::new("tasks", "create_task", json!({"title": "${item.title}"}))
//!         .for_each("${steps.search.results}"),
//! ]);
//! registry.register(workflow.tool_for(&registry).unwrap()).unwrap();
//!
//! let caller = Caller::new("u", "public");
//! let ran = registry.call(&caller, ToolCall::new("1", "news_to_tasks", json!({"topic": "AI"}))).await;
//! assert_eq!(ran.result.unwrap()["output"], json!(["task: A", "task: B"]));
//! # }
//! ```

mod check;
pub(crate) mod expression;
mod run;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::definition::ToolDefinition;
use crate::registry::Registry;

pub use crate::paused::{PausedCall, StepOf};
pub use run::WorkflowTool;

/// What a step's failure does to the workflow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// The workflow ends with the step's error (the default).
    #[default]
    Stop,
    /// The workflow goes on; the step's result is null, its error is reported.
    Continue,
}

/// One step: a tool called with arguments built from expressions.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The step's id, by which later steps read its result.
    pub id: String,
    /// The tool it calls.
    pub tool: String,
    /// The arguments: a JSON object whose strings may hold `${...}`.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// A list to call the tool once per element of (`${item}` in the arguments).
    #[serde(default)]
    pub for_each: Option<String>,
    /// A condition: the step is skipped unless it holds.
    #[serde(default)]
    pub when: Option<String>,
    /// What its failure does.
    #[serde(default)]
    pub on_error: OnError,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl Step {
    /// A step calling `tool` with `arguments`.
    pub fn new(id: impl Into<String>, tool: impl Into<String>, arguments: Value) -> Self {
        Step {
            id: id.into(),
            tool: tool.into(),
            arguments,
            for_each: None,
            when: None,
            on_error: OnError::Stop,
        }
    }

    /// Calls the tool once per element of the list `expression` gives.
    pub fn for_each(mut self, expression: impl Into<String>) -> Self {
        self.for_each = Some(expression.into());
        self
    }

    /// Runs only when `condition` holds.
    pub fn when(mut self, condition: impl Into<String>) -> Self {
        self.when = Some(condition.into());
        self
    }

    /// Goes on when the step fails.
    pub fn continue_on_error(mut self) -> Self {
        self.on_error = OnError::Continue;
        self
    }
}

/// A workflow: its definition as a tool, and its steps.
#[derive(Debug, Clone)]
pub struct Workflow {
    definition: ToolDefinition,
    steps: Vec<Step>,
}

/// Something wrong with a workflow, found before it is registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowProblem {
    /// The step it is about, if one.
    pub step: Option<String>,
    /// What is wrong, and how to fix it.
    pub message: String,
}

impl std::fmt::Display for WorkflowProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.step {
            Some(step) => write!(f, "step `{step}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Workflow {
    /// A workflow named and described by `definition` (its input schema is the workflow's
    /// parameters), running `steps` in order.
    pub fn new(definition: ToolDefinition, steps: Vec<Step>) -> Self {
        Workflow { definition, steps }
    }

    /// Its definition as a tool.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Its steps.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The tool that runs it in `registry`, once it is checked against the registry's tools:
    /// every step's tool exists, every expression reads a parameter, an earlier step or (in
    /// a `for_each` step) the item, the arguments fit the step tool's schema, and the
    /// workflow does not call itself. Register the tool on the same registry.
    pub fn tool_for(self, registry: &Registry) -> Result<WorkflowTool, Vec<WorkflowProblem>> {
        let problems = check::problems(&self, registry);
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(WorkflowTool::new(registry, Arc::new(self)))
    }
}
