//! What is checked before a workflow is registered: each a problem naming its step.

use std::collections::HashSet;

use serde_json::Value;

use super::expression::{self, Path, Root};
use super::{Workflow, WorkflowProblem};
use crate::caller::Caller;
use crate::registry::Registry;

pub(super) fn problems(workflow: &Workflow, registry: &Registry) -> Vec<WorkflowProblem> {
    let mut problems = Vec::new();
    if workflow.steps.is_empty() {
        problems.push(problem(None, "a workflow has at least one step"));
    }
    let params = workflow.definition.input_schema["properties"].as_object();
    let top = registry.roles().names().last().cloned().unwrap_or_default();
    let everyone = Caller::new("workflow-check", top);
    let mut earlier: HashSet<&str> = HashSet::new();
    let all: HashSet<&str> = workflow.steps.iter().map(|step| step.id.as_str()).collect();
    for step in &workflow.steps {
        let here = Some(step.id.as_str());
        let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if step.id.is_empty() || !step.id.chars().all(valid) {
            problems.push(problem(here, "a step's id is letters, digits, `_` and `-`"));
        }
        if earlier.contains(step.id.as_str()) {
            problems.push(problem(here, "two steps have this id; give each its own"));
        }
        if step.tool == workflow.definition.name {
            problems.push(problem(here, "the workflow calls itself (a cycle)"));
        }
        let mut paths = Vec::new();
        let read = expression::paths_in(&step.arguments, &mut paths)
            .and_then(|()| conditions(step, &mut paths));
        if let Err(why) = read {
            problems.push(problem(here, why));
        }
        for path in &paths {
            if let Some(why) = reference(path, step.for_each.is_some(), (&earlier, &all), params) {
                problems.push(problem(here, why));
            }
        }
        match registry.definition(&everyone, &step.tool) {
            None if step.tool != workflow.definition.name => problems.push(problem(
                here,
                format!("calls `{}`, which is no tool of the registry", step.tool),
            )),
            Some(tool) => problems.extend(
                fits(&step.arguments, &tool.input_schema, &step.tool)
                    .into_iter()
                    .map(|why| problem(here, why)),
            ),
            None => {}
        }
        earlier.insert(&step.id);
    }
    problems
}

fn conditions(step: &super::Step, paths: &mut Vec<Path>) -> Result<(), String> {
    for text in [&step.for_each, &step.when].into_iter().flatten() {
        let bare = text.trim().trim_start_matches('!');
        expression::paths_in(&Value::String(bare.to_owned()), paths)?;
    }
    Ok(())
}

/// What is wrong with a path, if anything.
fn reference(
    path: &Path,
    in_for_each: bool,
    (earlier, all): (&HashSet<&str>, &HashSet<&str>),
    params: Option<&serde_json::Map<String, Value>>,
) -> Option<String> {
    match &path.root {
        Root::Step(id) if earlier.contains(id.as_str()) => None,
        Root::Step(id) if all.contains(id.as_str()) => Some(format!(
            "reads step `{id}`, which runs after it; a step reads only earlier ones"
        )),
        Root::Step(id) => Some(format!("reads step `{id}`, and there is no such step")),
        Root::Item if in_for_each => None,
        Root::Item => Some("reads `item`, which only a `for_each` step has".to_owned()),
        Root::Params => match (path.first_key(), params) {
            (Some(key), Some(params)) if !params.contains_key(key) => Some(format!(
                "reads `params.{key}`, which is no parameter of the workflow"
            )),
            _ => None,
        },
    }
}

/// The arguments' keys against the step tool's schema: none it does not take (when it
/// takes no others), none it requires missing.
fn fits(arguments: &Value, schema: &Value, tool: &str) -> Vec<String> {
    let Some(given) = arguments.as_object() else {
        return vec!["its arguments are a JSON object".to_owned()];
    };
    let properties = schema["properties"].as_object();
    let mut problems = Vec::new();
    if schema["additionalProperties"] == Value::Bool(false) {
        for key in given
            .keys()
            .filter(|key| properties.is_none_or(|p| !p.contains_key(*key)))
        {
            problems.push(format!("gives `{key}`, which `{tool}` does not take"));
        }
    }
    for required in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !given.contains_key(required) {
            problems.push(format!(
                "does not give `{required}`, which `{tool}` requires"
            ));
        }
    }
    problems
}

fn problem(step: Option<&str>, message: impl Into<String>) -> WorkflowProblem {
    WorkflowProblem {
        step: step.map(str::to_owned),
        message: message.into(),
    }
}
