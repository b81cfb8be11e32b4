//! The record `#[tool]` submits to `inventory` for each function: static data and fn
//! pointers only, so nothing runs before `main`.

use std::time::Duration;

use serde_json::Value;

use crate::context::{StateRequirement, ToolContext};
use crate::definition::{Hints, Risk, SourceLocation, ToolDefinition};
use crate::exact::{ExactField, ExactInvoke, NowInvoke};
use crate::tool::ToolFuture;

/// One `#[tool]` function, as registered at compile time.
#[doc(hidden)]
pub struct StaticTool {
    pub name: &'static str,
    pub title: Option<&'static str>,
    pub description: &'static str,
    pub group: Option<&'static str>,
    pub tags: &'static [&'static str],
    pub permission: &'static str,
    pub risk: Risk,
    pub hints: Hints,
    pub timeout_ms: Option<u64>,
    pub untrusted_results: bool,
    pub ui: Option<&'static str>,
    pub secrets: &'static [&'static str],
    pub file: &'static str,
    pub line: u32,
    pub input_schema: fn() -> Value,
    pub output_schema: fn() -> Option<Value>,
    pub returns_content: fn() -> bool,
    pub requirements: fn() -> Vec<StateRequirement>,
    /// Reads the arguments (checked already) into the parameter types and starts the
    /// function; the context is made only if the function takes part of it.
    pub invoke: fn(&mut dyn FnMut() -> ToolContext, &Value) -> ToolFuture,
    /// The parameters' shapes, if every parameter type is read exactly as its schema says
    /// (see `crate::exact`).
    pub exact_fields: fn() -> Option<Vec<ExactField>>,
    /// Reads the arguments straight into the parameter types (`None` where serde cannot);
    /// the context is made only if the function takes part of it.
    pub invoke_exact: ExactInvoke,
    /// For an async function that finishes when first polled (no `.await` in its body):
    /// reads the arguments straight into the parameter types and, if allowed, runs it in
    /// place, with no future boxed.
    pub invoke_now: Option<NowInvoke>,
}

inventory::collect!(StaticTool);

impl StaticTool {
    /// Builds the definition; schemas are generated here, once per registry build.
    pub(crate) fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.to_owned(),
            title: self.title.map(str::to_owned),
            description: self.description.to_owned(),
            group: self.group.map(str::to_owned),
            tags: self.tags.iter().map(|tag| (*tag).to_owned()).collect(),
            permission: self.permission.to_owned(),
            risk: self.risk,
            hints: self.hints,
            input_schema: (self.input_schema)(),
            output_schema: (self.output_schema)(),
            ui: self.ui.map(str::to_owned),
            returns_content: (self.returns_content)(),
            timeout: self.timeout_ms.map(Duration::from_millis),
            source: Some(SourceLocation {
                file: self.file.to_owned(),
                line: self.line,
            }),
            secret_arguments: self.secrets.iter().map(|name| (*name).to_owned()).collect(),
            untrusted_results: self.untrusted_results,
        }
    }
}

/// Every `#[tool]` function linked into the program.
pub(crate) fn linked_tools() -> impl Iterator<Item = &'static StaticTool> {
    inventory::iter::<StaticTool>.into_iter()
}
