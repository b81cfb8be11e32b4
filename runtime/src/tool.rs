//! Tools registered at run time: the [`Tool`] trait and closure tools.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::call::ToolOutcome;
use crate::context::{StateRequirement, ToolContext};
use crate::definition::ToolDefinition;
use crate::error::ToolError;

/// What running a tool yields: its JSON result or an error for the model.
pub type ToolResult = Result<Value, ToolError>;

/// The future of one tool call.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolResult> + Send + 'static>>;

/// A tool known at run time rather than through `#[tool]`: imported from an MCP server,
/// defined in a file, generated from a config.
///
/// The registry validates arguments against `definition().input_schema` before `call`
/// runs, exactly as for `#[tool]` functions.
///
/// ```
/// use serde_json::{json, Value};
/// use toolgate::{Tool, ToolContext, ToolDefinition, ToolFuture};
///
/// struct Echo;
///
/// impl Tool for Echo {
///     fn definition(&self) -> ToolDefinition {
///         ToolDefinition::new(
///             "echo",
///             "Repeat the text back.",
///             "public",
///             json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///         )
///     }
///
///     fn call(&self, _context: ToolContext, arguments: Value) -> ToolFuture {
///         Box::pin(async move { Ok(arguments["text"].clone()) })
///     }
/// }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The tool's definition; read once, when the tool is registered.
    fn definition(&self) -> ToolDefinition;

    /// Runs one call with arguments that already passed the input schema.
    fn call(&self, context: ToolContext, arguments: Value) -> ToolFuture;

    /// The application state the tool needs (checked when it is registered).
    fn requirements(&self) -> Vec<StateRequirement> {
        Vec::new()
    }

    /// Looks at a call that needs a person's approval before anyone is asked: an error
    /// refuses the call at once (so no approver is shown a call that could not run), and a
    /// value is shown to the approver beside the arguments ([`ApprovalRequest::review`],
    /// [`PendingCall::review`]), e.g. the exact command line a program would be started with.
    /// The default shows nothing more.
    ///
    /// [`ApprovalRequest::review`]: crate::approval::ApprovalRequest::review
    /// [`PendingCall::review`]: crate::approval::PendingCall::review
    fn review(&self, context: &ToolContext, arguments: &Value) -> Result<Option<Value>, ToolError> {
        let _ = (context, arguments);
        Ok(None)
    }

    /// Goes on with a call of this tool that stopped because one of its steps (a call it
    /// made with [`CallOptions::step_of`](crate::CallOptions::step_of)) waited for a
    /// person's decision: `state` is what the tool kept then
    /// ([`StepOf`](crate::workflow::StepOf)), `step` the step's outcome once decided. It
    /// runs as the call's caller, with the call's id, under the tool's time limit; its
    /// result ends the call. The default refuses: a tool that makes no steps never stops.
    fn go_on(&self, context: ToolContext, state: Value, step: ToolOutcome) -> ToolFuture {
        let _ = (context, state, step);
        cannot_go_on()
    }
}

/// What a tool that makes no steps answers when asked to go on after one.
pub(crate) fn cannot_go_on() -> ToolFuture {
    Box::pin(async {
        Err(ToolError::execution(
            "this tool cannot go on after one of its steps was decided",
        ))
    })
}

/// [`Tool::review`] as a plain function, for tools made from templates.
pub type ReviewFn = fn(&ToolContext, &Value) -> Result<Value, ToolError>;

type Handler = dyn Fn(ToolContext, Value) -> ToolFuture + Send + Sync;

/// A tool made of a definition and a closure, for tools built at run time.
///
/// ```
/// use serde_json::json;
/// use toolgate::{FnTool, ToolDefinition};
///
/// let definition = ToolDefinition::new(
///     "add",
///     "Add two integers.",
///     "public",
///     json!({
///         "type": "object",
///         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
///         "required": ["a", "b"],
///         "additionalProperties": false
///     }),
/// );
/// let tool = FnTool::new(definition, |_context, arguments| async move {
///     Ok(json!(arguments["a"].as_i64().unwrap_or(0) + arguments["b"].as_i64().unwrap_or(0)))
/// });
/// ```
#[derive(Clone)]
pub struct FnTool {
    definition: ToolDefinition,
    handler: Arc<Handler>,
}

impl FnTool {
    /// A tool from a definition and an async closure.
    pub fn new<F, Fut>(definition: ToolDefinition, handler: F) -> Self
    where
        F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        FnTool {
            definition,
            handler: Arc::new(move |context, arguments| Box::pin(handler(context, arguments))),
        }
    }
}

impl Tool for FnTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn call(&self, context: ToolContext, arguments: Value) -> ToolFuture {
        (self.handler)(context, arguments)
    }
}
