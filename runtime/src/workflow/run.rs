//! Running a workflow: each step called through the registry as the workflow's caller, in
//! order; the result names what each step did, and `output` is the last step's result.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::expression::{Scope, holds};
use super::{OnError, Step, Workflow};
use crate::call::ToolCall;
use crate::context::ToolContext;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::registry::{CallOptions, Registry, WeakRegistry};
use crate::tool::{Tool, ToolFuture};

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
            let registry = registry
                .upgrade()
                .ok_or_else(|| ToolError::execution("the registry is gone"))?;
            let depth = context.call_id().as_str().matches('/').count();
            if depth >= MOST_DEPTH {
                return Err(ToolError::execution(format!(
                    "workflows within workflows go deeper than {MOST_DEPTH}: does one call itself through another?"
                )));
            }
            Running {
                registry,
                context,
                params: arguments,
                steps: Map::new(),
                report: Vec::new(),
            }
            .all(&workflow)
            .await
        })
    }
}

/// One run's state: the results so far, and what each step did.
struct Running {
    registry: Registry,
    context: ToolContext,
    params: Value,
    steps: Map<String, Value>,
    report: Vec<Value>,
}

impl Running {
    async fn all(mut self, workflow: &Workflow) -> Result<Value, ToolError> {
        let mut output = Value::Null;
        for step in &workflow.steps {
            let scope = Scope {
                params: &self.params,
                steps: &self.steps,
                item: None,
            };
            let runs = match &step.when {
                Some(condition) => holds(&scope, condition).map_err(ToolError::execution)?,
                None => true,
            };
            if !runs {
                self.report
                    .push(json!({"step": step.id, "tool": step.tool, "status": "skipped"}));
                self.steps.insert(step.id.clone(), Value::Null);
                continue;
            }
            output = self.step(step).await?;
            self.steps.insert(step.id.clone(), output.clone());
        }
        Ok(json!({"steps": self.report, "output": output}))
    }

    /// Runs one step (once, or per item); its result, or the workflow's error.
    async fn step(&mut self, step: &Step) -> Result<Value, ToolError> {
        let items = match &step.for_each {
            None => None,
            Some(list) => Some(self.items(step, list)?),
        };
        let Some(items) = items else {
            return self.one(step, None, 0).await;
        };
        let mut results = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            results.push(self.one(step, Some(item), index).await?);
        }
        Ok(Value::Array(results))
    }

    /// The list a `for_each` step goes through (nothing for null).
    fn items(&self, step: &Step, list: &str) -> Result<Vec<Value>, ToolError> {
        let scope = Scope {
            params: &self.params,
            steps: &self.steps,
            item: None,
        };
        let value = scope
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

    /// One call of a step's tool, as the workflow's caller.
    async fn one(
        &mut self,
        step: &Step,
        item: Option<&Value>,
        index: usize,
    ) -> Result<Value, ToolError> {
        let scope = Scope {
            params: &self.params,
            steps: &self.steps,
            item,
        };
        let arguments = scope
            .render(&step.arguments)
            .map_err(ToolError::execution)?;
        let id = format!("{}/{}.{index}", self.context.call_id().as_str(), step.id);
        let options = CallOptions {
            cancel: Some(self.context.cancellation().clone()),
            ..CallOptions::default()
        };
        let caller = self.context.caller().clone();
        let outcome = self
            .registry
            .call_with(
                &caller,
                ToolCall::new(id, step.tool.as_str(), arguments),
                options,
            )
            .await;
        match outcome.result {
            Ok(value) => {
                self.report.push(
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
                self.report.push(
                    json!({"step": step.id, "tool": step.tool, "status": "failed", "error": error}),
                );
                Ok(Value::Null)
            }
        }
    }

    /// The workflow's error when a step stops it: the step's own code (a step waiting for
    /// approval keeps `approval_required` and its ticket), with what ran before.
    fn stopped(&mut self, step: &Step, error: ToolError) -> ToolError {
        let waiting = error.code == ErrorCode::ApprovalRequired;
        let what = if waiting {
            "waits for approval"
        } else {
            "failed"
        };
        let mut details =
            json!({"step": step.id, "tool": step.tool, "done": self.report, "error": error});
        if let Some(ticket) = error.details.as_ref().and_then(|d| d.get("ticket")) {
            details["ticket"] = ticket.clone();
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
