//! Tools defined with `#[tool(manual)]`: not registered by themselves, but handed to the
//! application, which gives each a permission (libraries of ready tools hard-code no role).

use serde_json::Value;

use crate::context::{StateRequirement, ToolContext};
use crate::definition::{Risk, ToolDefinition};
use crate::error::ToolError;
use crate::static_tool::StaticTool;
use crate::tool::{ReviewFn, Tool, ToolFuture};

/// A `#[tool(manual)]` function, waiting for its permission. `#[tool(manual)] fn read_file`
/// generates `read_file_tool() -> ToolTemplate`.
///
/// ```rust,standalone_crate
/// use toolgate::prelude::*;
///
/// /// Echo the text back.
/// #[tool(manual, read_only)]
/// pub fn echo(text: String) -> String {
///     text
/// }
///
/// let registry = Registry::builder()
///     .roles(["public", "staff"])
///     .tool(echo_tool().permission("staff"))
///     .build()
///     .unwrap();
/// assert_eq!(registry.visible_to(&Caller::new("p", "public")).len(), 0);
/// assert_eq!(registry.visible_to(&Caller::new("s", "staff")).len(), 1);
/// ```
#[derive(Clone, Copy)]
pub struct ToolTemplate {
    tool: &'static StaticTool,
    review: Option<ReviewFn>,
    untrusted_results: bool,
}

impl ToolTemplate {
    #[doc(hidden)]
    pub fn from_static(tool: &'static StaticTool) -> Self {
        ToolTemplate {
            tool,
            review: None,
            untrusted_results: false,
        }
    }

    /// Gives the tool a [`Tool::review`]: run before a person is asked to approve a call,
    /// refusing it early or adding what the approver should see.
    pub fn with_review(mut self, review: ReviewFn) -> Self {
        self.review = Some(review);
        self
    }

    /// Marks its results as text from outside (a file's content, a program's output), which
    /// the agent loop sends to the model as data
    /// ([`ToolDefinition::untrusted_results`]).
    pub fn untrusted_results(mut self) -> Self {
        self.untrusted_results = true;
        self
    }

    /// The tool's definition as written (its permission empty unless the attribute set one).
    pub fn definition(&self) -> ToolDefinition {
        self.tool.definition()
    }

    /// The tool with the lowest role that may see and call it.
    pub fn permission(self, role: impl Into<String>) -> ConfiguredTool {
        let mut definition = self.tool.definition();
        definition.permission = role.into();
        definition.untrusted_results |= self.untrusted_results;
        ConfiguredTool {
            tool: self.tool,
            definition,
            review: self.review,
        }
    }
}

/// A [`ToolTemplate`] with its permission, ready for [`RegistryBuilder::tool`](crate::RegistryBuilder::tool)
/// or [`Registry::register`](crate::Registry::register); its name and risk can be changed too.
#[derive(Clone)]
pub struct ConfiguredTool {
    tool: &'static StaticTool,
    definition: ToolDefinition,
    review: Option<ReviewFn>,
}

impl ConfiguredTool {
    /// Registers it under another name (e.g. to run two configurations side by side).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.definition.name = name.into();
        self
    }

    /// Sets its risk (which the policy reads to ask for approval).
    pub fn risk(mut self, risk: Risk) -> Self {
        self.definition.risk = risk;
        self
    }

    /// The definition it will be registered with.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }
}

impl Tool for ConfiguredTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn call(&self, context: ToolContext, arguments: Value) -> ToolFuture {
        let mut context = Some(context);
        let mut take = || context.take().expect("a tool takes its context once");
        (self.tool.invoke)(&mut take, &arguments)
    }

    fn requirements(&self) -> Vec<StateRequirement> {
        (self.tool.requirements)()
    }

    fn review(&self, context: &ToolContext, arguments: &Value) -> Result<Option<Value>, ToolError> {
        self.review
            .map(|review| review(context, arguments))
            .transpose()
    }
}
