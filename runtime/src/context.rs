//! What a tool can ask to be given besides its arguments: `#[ctx]` parameters.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde_json::Value;

pub use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::error::ToolError;
use crate::input::ClientInput;
use crate::paused::StepOf;
use crate::progress::{LogLevel, LogMessage, LogSink, Progress, ProgressSink};

/// Application state shared with tools, registered with
/// [`RegistryBuilder::state`](crate::RegistryBuilder::state) and received as
/// `#[ctx] name: State<T>`.
///
/// ```rust,standalone_crate
/// use toolgate::prelude::*;
///
/// struct Clinic { name: String }
///
/// /// Name the clinic.
/// #[tool(permission = "public")]
/// fn clinic_name(#[ctx] clinic: State<Clinic>) -> String {
///     clinic.name.clone()
/// }
/// # fn main() {}
/// ```
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// The id of the call being run, as the provider sent it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallId(pub Arc<str>);

impl CallId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Type-keyed application state.
#[derive(Default, Clone)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    pub(crate) fn contains(&self, type_id: TypeId) -> bool {
        self.values.contains_key(&type_id)
    }

    fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = self.values.get(&TypeId::of::<T>())?;
        Arc::clone(value).downcast::<T>().ok()
    }
}

/// Everything a running call may draw on: state, caller, call id, cancellation.
#[derive(Clone)]
pub struct ToolContext {
    pub(crate) states: Arc<StateMap>,
    pub(crate) caller: Caller,
    pub(crate) call_id: CallId,
    pub(crate) cancel: CancellationToken,
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) log: Option<LogSink>,
    pub(crate) input: Option<Arc<ClientInput>>,
    pub(crate) run_id: Option<Arc<str>>,
    pub(crate) step_of: Option<StepOf>,
}

impl ToolContext {
    /// The agent run the call belongs to, if any (a tool that calls other tools passes it
    /// on in [`CallOptions::run_id`](crate::CallOptions::run_id)).
    pub fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }

    /// The tool call this call is a step of, if it is one (see
    /// [`StepOf`](crate::workflow::StepOf)): a tool that makes steps of its own names it
    /// as their outer call.
    pub fn step_of(&self) -> Option<&StepOf> {
        self.step_of.as_ref()
    }

    /// The caller the call is made for.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The call's id.
    pub fn call_id(&self) -> &CallId {
        &self.call_id
    }

    /// Reports how far the call is: `done` of `total` (when known), with a message for
    /// people (empty for none). It goes to whoever asked to hear it (an MCP client that gave
    /// a progress token, see [`progress`](crate::progress)), and nowhere otherwise.
    pub fn progress(&self, done: f64, total: Option<f64>, message: impl Into<String>) {
        if let Some(sink) = &self.progress {
            let message = message.into();
            sink.report(Progress {
                done,
                total,
                message: (!message.is_empty()).then_some(message),
            });
        }
    }

    /// Logs a message (text, or any JSON) for the caller's client, when it asked for
    /// messages of this level (an MCP client, see [`progress`](crate::progress)); nowhere
    /// otherwise. The application's own logs are `tracing`'s.
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) {
        if let Some(sink) = &self.log {
            sink.log(LogMessage {
                level,
                data: data.into(),
            });
        }
    }

    /// Cancelled when the call is cancelled or times out; long tools should watch it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// State of type `T`, if the registry was given one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.states.get::<T>().map(State)
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("caller", &self.caller)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

/// A state type a tool needs; checked by [`RegistryBuilder::build`](crate::RegistryBuilder::build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRequirement {
    /// The state's type id.
    pub type_id: TypeId,
    /// The state's type name, for messages.
    pub type_name: &'static str,
}

/// A type that can be a `#[ctx]` parameter of a tool.
///
/// Implemented for [`State<T>`], [`Caller`], [`CallId`], [`CancellationToken`] and
/// [`ToolContext`] itself.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[ctx]` parameter of a tool",
    label = "not a context type",
    note = "a `#[ctx]` parameter is one of `State<T>`, `Caller`, `CallId`, `CancellationToken`, `Input` or `ToolContext`",
    note = "to pass your own value, register it with `Registry::builder().state(value)` and take `#[ctx] name: State<YourType>`"
)]
pub trait FromContext: Sized {
    /// Takes the value out of the context.
    fn from_context(context: &ToolContext) -> Result<Self, ToolError>;

    /// The state this parameter needs, checked when the registry is built.
    fn requirement() -> Option<StateRequirement> {
        None
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(context: &ToolContext) -> Result<Self, ToolError> {
        context.state::<T>().ok_or_else(|| {
            ToolError::execution(format!(
                "the application did not provide the state `{}` this tool needs",
                type_name::<T>()
            ))
        })
    }

    fn requirement() -> Option<StateRequirement> {
        Some(StateRequirement {
            type_id: TypeId::of::<T>(),
            type_name: type_name::<T>(),
        })
    }
}

impl FromContext for Caller {
    fn from_context(context: &ToolContext) -> Result<Self, ToolError> {
        Ok(context.caller.clone())
    }
}

impl FromContext for CallId {
    fn from_context(context: &ToolContext) -> Result<Self, ToolError> {
        Ok(context.call_id.clone())
    }
}

impl FromContext for CancellationToken {
    fn from_context(context: &ToolContext) -> Result<Self, ToolError> {
        Ok(context.cancel.clone())
    }
}

impl FromContext for ToolContext {
    fn from_context(context: &ToolContext) -> Result<Self, ToolError> {
        Ok(context.clone())
    }
}

impl FromContext for crate::input::Input {
    fn from_context(context: &ToolContext) -> Result<Self, ToolError> {
        Ok(crate::input::Input(context.input.clone()))
    }
}
