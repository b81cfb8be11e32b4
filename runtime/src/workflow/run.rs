//! Running a workflow: each step called through the registry as the workflow's caller, in
//! order; the result names what each step did, and `output` is the last step's result.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::expression::{Scope, holds};
use super::{OnError, Step, Workflow};
use crate::call::{ToolCall, ToolOutcome};
use crate::context::ToolContext;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::paused::StepOf;
use crate::registry::{CallOptions, Registry, WeakRegistry};
use crate::tool::{Tool, ToolFuture, ToolResult};

/// The most elements a `for_each` step goes through.
const MOST_ITEMS: usize = 100;
/// The most workflows within workflows (deeper is taken for a cycle).
const MOST_DEPTH: usize = 8;

/// A [`Workflow`] as a tool of the registry it was checked against.
pub struct WorkflowTool {
    registry: WeakRegistry,
    workflow: Arc<Workflow>,
}

impl WorkflowTool {
    pub(super) fn new(registry: &Registry, workflow: Arc<Workflow>) -> Self {
        WorkflowTool {
            registry: registry.downgrade(),
            workflow,
        }
    }
}

impl Tool for WorkflowTool {
    fn definition(&self) -> ToolDefinition {
        self.workflow.definition.clone()
    }

    /// What an approver (or a dry run) is shown: the steps that would run.
    fn review(
        &self,
        _context: &ToolContext,
        arguments: &Value,
    ) -> Result<Option<Value>, ToolError> {
        let steps: Vec<Value> = self
            .workflow
            .steps
            .iter()
            .map(|step| {
                json!({"step": step.id, "tool": step.tool, "arguments": step.arguments,
                   "for_each": step.for_each, "when": step.when})
            })
            .collect();
        Ok(Some(
            json!({"workflow": self.workflow.definition.name, "arguments": arguments, "steps": steps}),
        ))
    }

    fn call(&self, context: ToolContext, arguments: Value) -> ToolFuture {
        let (registry, workflow) = (self.registry.clone(), Arc::clone(&self.workflow));
        Box::pin(async move {
            let depth = context.call_id().as_str().matches('/').count();
            if depth >= MOST_DEPTH {
                return Err(ToolError::execution(format!(
                    "workflows within workflows go deeper than {MOST_DEPTH}: does one call itself through another?"
                )));
            }
            let progress = Progress {
                params: arguments,
                ..Progress::default()
            };
            Running::new(registry, context, workflow, progress)?
                .run_on()
                .await
        })
    }

    /// Goes on after a step that waited for a person was decided: the step's outcome is
    /// taken as if it had come at once, and the workflow runs on from there.
    fn go_on(&self, context: ToolContext, state: Value, step: ToolOutcome) -> ToolFuture {
        let (registry, workflow) = (self.registry.clone(), Arc::clone(&self.workflow));
        Box::pin(async move {
            let progress: Progress = serde_json::from_value(state).map_err(|error| {
                ToolError::execution(format!("what the workflow kept could not be read: {error}"))
            })?;
            let mut running = Running::new(registry, context, workflow, progress)?;
            let workflow = Arc::clone(&running.workflow);
            let waited = workflow
                .steps
                .get(running.progress.at)
                .filter(|waited| waited.id == running.progress.step)
                .ok_or_else(|| {
                    ToolError::execution(
                        "the workflow changed while its step waited for approval; call it again",
                    )
                })?;
            let result = running.settle(waited, step.result)?;
            match waited.for_each {
                Some(_) => Arc::make_mut(&mut running.progress).items_done.push(result),
                None => running.done(waited, result),
            }
            running.run_on().await
        })
    }
}

/// Where a run is: what it was given, the results so far and what each step did. Kept
/// with a step that waits for a person, to go on from after the decision.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Progress {
    params: Value,
    steps: Map<String, Value>,
    report: Vec<Value>,
    /// The last result of a step that ran.
    output: Value,
    /// The step being run (its index and id), and the results of its items so far.
    at: usize,
    step: String,
    items_done: Vec<Value>,
}

/// One run: the registry its steps are called through, the workflow's call, and where it
/// is (shared with a waiting step's [`StepOf`] without a copy).
struct Running {
    registry: Registry,
    context: ToolContext,
    workflow: Arc<Workflow>,
    progress: Arc<Progress>,
}

impl Running {
    fn new(
        registry: WeakRegistry,
        context: ToolContext,
        workflow: Arc<Workflow>,
        progress: Progress,
    ) -> Result<Self, ToolError> {
        let registry = registry
            .upgrade()
            .ok_or_else(|| ToolError::execution("the registry is gone"))?;
        Ok(Running {
            registry,
            context,
            workflow,
            progress: Arc::new(progress),
        })
    }

    /// Runs the steps from where the run is (a `for_each` step from its next item) to the
    /// end: the workflow's result, or the error that stopped it.
    async fn run_on(mut self) -> Result<Value, ToolError> {
        let workflow = Arc::clone(&self.workflow);
        while let Some(step) = workflow.steps.get(self.progress.at) {
            let progress = Arc::make_mut(&mut self.progress);
            let begun = progress.step == step.id && !progress.items_done.is_empty();
            progress.step.clone_from(&step.id);
            if !begun && !self.runs(step)? {
                self.skipped(step);
                continue;
            }
            let result = self.step(step).await?;
            self.done(step, result);
        }
        let progress = Arc::unwrap_or_clone(self.progress);
        Ok(json!({"steps": progress.report, "output": progress.output}))
    }

    /// Whether the step's condition holds.
    fn runs(&self, step: &Step) -> Result<bool, ToolError> {
        let Some(condition) = &step.when else {
            return Ok(true);
        };
        holds(&self.scope(None), condition).map_err(ToolError::execution)
    }

    fn scope<'a>(&'a self, item: Option<&'a Value>) -> Scope<'a> {
        Scope {
            params: &self.progress.params,
            steps: &self.progress.steps,
            item,
        }
    }

    fn skipped(&mut self, step: &Step) {
        let progress = Arc::make_mut(&mut self.progress);
        let skipped = json!({"step": step.id, "tool": step.tool, "status": "skipped"});
        progress.report.push(skipped);
        progress.steps.insert(step.id.clone(), Value::Null);
        progress.at += 1;
    }

    fn done(&mut self, step: &Step, result: Value) {
        let progress = Arc::make_mut(&mut self.progress);
        progress.steps.insert(step.id.clone(), result.clone());
        progress.output = result;
        progress.items_done.clear();
        progress.at += 1;
    }

    /// Runs one step (once, or for each item not done yet); its result, or the
    /// workflow's error.
    async fn step(&mut self, step: &Step) -> Result<Value, ToolError> {
        let Some(list) = &step.for_each else {
            return self.one(step, None, 0).await;
        };
        let items = self.items(step, list)?;
        for (index, item) in items
            .iter()
            .enumerate()
            .skip(self.progress.items_done.len())
        {
            let result = self.one(step, Some(item), index).await?;
            Arc::make_mut(&mut self.progress).items_done.push(result);
        }
        let progress = Arc::make_mut(&mut self.progress);
        Ok(Value::Array(std::mem::take(&mut progress.items_done)))
    }

    /// The list a `for_each` step goes through (nothing for null).
    fn items(&self, step: &Step, list: &str) -> Result<Vec<Value>, ToolError> {
        let value = self
            .scope(None)
            .render(&Value::String(list.to_owned()))
            .map_err(ToolError::execution)?;
        match value {
            Value::Array(items) if items.len() <= MOST_ITEMS => Ok(items),
            Value::Array(items) => Err(ToolError::execution(format!(
                "step `{}`: `for_each` gives {} elements; at most {MOST_ITEMS}",
                step.id,
                items.len()
            ))),
            Value::Null => Ok(Vec::new()),
            other => Err(ToolError::execution(format!(
                "step `{}`: `for_each` gives {}, not a list",
                step.id,
                kind(&other)
            ))),
        }
    }

    /// One call of a step's tool, as the workflow's caller, in the workflow's agent run.
    async fn one(
        &mut self,
        step: &Step,
        item: Option<&Value>,
        index: usize,
    ) -> Result<Value, ToolError> {
        let arguments = self
            .scope(item)
            .render(&step.arguments)
            .map_err(ToolError::execution)?;
        let id = format!("{}/{}.{index}", self.context.call_id().as_str(), step.id);
        let options = CallOptions {
            cancel: Some(self.context.cancellation().clone()),
            run_id: self.context.run_id().map(str::to_owned),
            step_of: Some(self.step_of()),
            ..CallOptions::default()
        };
        let caller = self.context.caller().clone();
        let call = ToolCall::new(id, step.tool.as_str(), arguments);
        let outcome = self.registry.call_with(&caller, call, options).await;
        self.settle(step, outcome.result)
    }

    /// What a waiting step keeps of the run: where it is, read only if the step waits.
    fn step_of(&self) -> StepOf {
        let progress = Arc::clone(&self.progress);
        let state = move || serde_json::to_value(&*progress).unwrap_or_default();
        let name = self.workflow.definition.name.clone();
        let outer = self.context.step_of().cloned();
        StepOf::new(name, self.context.call_id().as_str(), state, outer)
    }

    /// A step's result as the run takes it: its value; null, reported, for a failure the
    /// step goes on after; or the workflow's error.
    fn settle(&mut self, step: &Step, result: ToolResult) -> Result<Value, ToolError> {
        let report = &mut Arc::make_mut(&mut self.progress).report;
        match result {
            Ok(value) => {
                report.push(
                    json!({"step": step.id, "tool": step.tool, "status": "ok", "result": value}),
                );
                Ok(value)
            }
            Err(error)
                if error.code == ErrorCode::ApprovalRequired || step.on_error == OnError::Stop =>
            {
                Err(self.stopped(step, error))
            }
            Err(error) => {
                report.push(
                    json!({"step": step.id, "tool": step.tool, "status": "failed", "error": error}),
                );
                Ok(Value::Null)
            }
        }
    }

    /// The workflow's error when a step stops it: the step's own code (a step waiting for
    /// approval keeps `approval_required` and its ticket, so that whoever waits for the
    /// workflow waits for the ticket), with what ran before.
    fn stopped(&self, step: &Step, error: ToolError) -> ToolError {
        let waiting = error.code == ErrorCode::ApprovalRequired;
        let what = if waiting {
            "waits for approval; the workflow goes on once it is decided"
        } else {
            "failed"
        };
        let done = &self.progress.report;
        let mut details = json!({"step": step.id, "tool": step.tool, "done": done, "error": error});
        for key in ["ticket", "ticket_id", "expires", "reason"] {
            if let Some(value) = error.details.as_ref().and_then(|d| d.get(key)) {
                details[key] = value.clone();
            }
        }
        ToolError::new(
            error.code.clone(),
            format!(
                "step `{}` ({}) {what}: {}",
                step.id, step.tool, error.message
            ),
        )
        .with_details(details)
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
