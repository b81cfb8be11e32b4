//! Steps of the application's own on every call's path.
//!
//! A call walks one ordered list of steps, whichever way it arrives (a single call, a
//! batch, a call resumed after approval, an agent turn, HTTP, MCP):
//!
//! ```text
//! find ─► arguments ─► rate limits ─► authorize ─► record before run ─► run ─► check result ─► record
//!                                     (call stages,                            (result stages)
//!                                      then the policy,
//!                                      grants, review, approval)
//! ```
//!
//! The application adds stages to that list with the
//! [`RegistryBuilder`](crate::RegistryBuilder), each kind at its own named step:
//!
//! | kind | step | may |
//! |---|---|---|
//! | [`CallStage`] | authorize, before the policy | refuse the call, require approval, rewrite the arguments (validated against the schema again) |
//! | [`ResultStage`] | check result, after the tool ran | look at, redact or replace the result before the model, the audit record and the events see it |
//! | [`CallWrapper`] | around everything, from finding the tool to the recorded outcome | time the call, hold a span open over it |
//! | [`ListingStage`] | finding the tool, and every list of tools | hide a tool from a caller (a hidden tool is answered exactly as an unknown one), or from its lists only |
//!
//! Stages of one kind run in the order they were added; the first that refuses ends the
//! call. A stage that panics is contained: the call ends with an error naming the stage,
//! and every other call goes on. What a call stage decided is in the call's audit record
//! (see [`AuditRecord::decision`](crate::audit::AuditRecord::decision)); what a result
//! stage made of a result is the call's outcome, recorded as such. Call and result stages
//! are synchronous and must not block: a stage that needs to wait for something belongs
//! in a [`CallWrapper`], whose future the call awaits.
//!
//! A registry with no stages pays nothing for them, and a stage pays only for what it
//! reads: the arguments are made into a JSON value when a stage first asks for them
//! ([`StageCall::arguments`]).
//!
//! ```
//! use serde_json::json;
//! use toolgate::stage::{CallStage, StageCall, StageVerdict};
//! use toolgate::{Caller, ErrorCode, Registry, ToolCall, ToolError};
//!
//! /// Refuses any call whose arguments mention a card number.
//! struct NoCardNumbers;
//!
//! impl CallStage for NoCardNumbers {
//!     fn name(&self) -> &str {
//!         "no_card_numbers"
//!     }
//!     fn check(&self, call: &StageCall<'_>) -> StageVerdict {
//!         if call.arguments().to_string().contains("4111") {
//!             let error = ToolError::new(ErrorCode::Denied, "card numbers may not be sent to tools");
//!             return StageVerdict::Refuse(error);
//!         }
//!         StageVerdict::Continue
//!     }
//! }
//!
//! # #[toolgate::tool(permission = "public")]
//! # /// Echoes its text.
//! # fn echo(
//! #     /// What to echo.
//! #     text: String,
//! # ) -> String { text }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let registry = Registry::builder().roles(["public"]).call_stage(NoCardNumbers).build().unwrap();
//! let caller = Caller::new("ada", "public");
//! let call = ToolCall::new("1", "echo", json!({"text": "pay with 4111 1111"}));
//! let outcome = registry.call(&caller, call).await;
//! assert_eq!(outcome.result.unwrap_err().code, ErrorCode::Denied);
//! # }
//! ```

use futures::future::BoxFuture;
use serde_json::Value;

use crate::call::ToolOutcome;
use crate::caller::Caller;
use crate::definition::ToolDefinition;
use crate::error::ToolError;
use crate::front::FrontEnd;
use crate::tool::ToolResult;

/// A call as a [`CallStage`] sees it, before it is authorized.
#[non_exhaustive]
pub struct StageCall<'a> {
    /// Who calls: the caller presenting now.
    pub caller: &'a Caller,
    /// The tool's definition.
    pub tool: &'a ToolDefinition,
    /// The call's id.
    pub call_id: &'a str,
    /// Where the call came in.
    pub front: FrontEnd,
    /// The agent run the call belongs to, if any.
    pub run_id: Option<&'a str>,
    arguments: &'a dyn ShownArguments,
    clear: bool,
}

/// Where a [`StageCall`] reads its arguments from, as they are first asked for.
pub(crate) trait ShownArguments {
    /// The arguments, `#[secret]` ones in `clear` or redacted.
    fn shown(&self, clear: bool) -> &Value;
}

/// A value given whole is shown as it is (what a test of a policy or a stage gives).
impl ShownArguments for Value {
    fn shown(&self, _clear: bool) -> &Value {
        self
    }
}

impl<'a> StageCall<'a> {
    pub(crate) fn new(
        (caller, tool, call_id): (&'a Caller, &'a ToolDefinition, &'a str),
        (front, run_id): (FrontEnd, Option<&'a str>),
        arguments: &'a dyn ShownArguments,
        clear: bool,
    ) -> Self {
        StageCall {
            caller,
            tool,
            call_id,
            front,
            run_id,
            arguments,
            clear,
        }
    }

    /// The arguments, checked against the schema (as an earlier stage rewrote them, if one
    /// did). `#[secret]` parameters read [`REDACTED`](crate::audit::REDACTED) unless the
    /// stage [needs secrets](CallStage::needs_secrets). Made when first asked for: a stage
    /// that decides by the caller and the tool alone costs a call no reading of them.
    pub fn arguments(&self) -> &Value {
        self.arguments.shown(self.clear)
    }
}

impl std::fmt::Debug for StageCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageCall")
            .field("caller", self.caller)
            .field("tool", &self.tool.name)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

/// What a [`CallStage`] decided.
#[derive(Debug, Clone)]
pub enum StageVerdict {
    /// Go on to the next stage (and then the policy).
    Continue,
    /// Do not run the call: this error goes back to the model as the call's result.
    Refuse(ToolError),
    /// Run the call only once a person approved it (through the registry's approval path:
    /// its approver, the caller's client, or a ticket); the reason is shown to them.
    RequireApproval {
        /// Why approval is needed.
        reason: String,
    },
    /// Run the call with these arguments instead. They are checked against the tool's
    /// schema again (the schema stays the contract): arguments it refuses refuse the call.
    /// A `#[secret]` value the stage was shown as [`REDACTED`](crate::audit::REDACTED) and left so keeps the
    /// caller's value.
    Rewrite(Value),
}

/// A step before a call is authorized: sees the caller, the tool and the checked arguments,
/// and may refuse the call, require approval or rewrite the arguments. Runs before the
/// policy, in the order stages were added ([`RegistryBuilder::call_stage`](crate::RegistryBuilder::call_stage)).
pub trait CallStage: Send + Sync + 'static {
    /// The stage's name, for the audit record and for errors.
    fn name(&self) -> &str;

    /// What to do with the call.
    fn check(&self, call: &StageCall<'_>) -> StageVerdict;

    /// What to do with the call, and what the call's audit record should say of it (e.g.
    /// the rules that decided), which is noted even when the call goes on. The default is
    /// [`check`](Self::check), with nothing to note.
    fn check_explained(&self, call: &StageCall<'_>) -> (StageVerdict, Option<String>) {
        (self.check(call), None)
    }

    /// Whether the stage must see `#[secret]` arguments in clear. The default is `false`:
    /// they read [`REDACTED`](crate::audit::REDACTED).
    fn needs_secrets(&self) -> bool {
        false
    }
}

/// A call as a [`ResultStage`] sees it, once its tool ran.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ResultCall<'a> {
    /// Who called.
    pub caller: &'a Caller,
    /// The tool's definition.
    pub tool: &'a ToolDefinition,
    /// The call's id.
    pub call_id: &'a str,
}

/// A step after a tool ran, before anyone sees its result: the model, the audit record,
/// the events. It may pass the result on, redact it or replace it (an `Err` becomes the
/// call's error). Runs in the order stages were added
/// ([`RegistryBuilder::result_stage`](crate::RegistryBuilder::result_stage)).
pub trait ResultStage: Send + Sync + 'static {
    /// The stage's name, for the audit record and for errors.
    fn name(&self) -> &str;

    /// The result as the stage passes it on.
    fn check(&self, call: &ResultCall<'_>, result: ToolResult) -> ToolResult;
}

/// A call as a [`CallWrapper`] sees it, before anything is decided.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct WrappedCall<'a> {
    /// Who calls.
    pub caller: &'a Caller,
    /// The tool's name as called (it may name no tool the caller sees).
    pub tool: &'a str,
    /// The call's id.
    pub call_id: &'a str,
    /// Where the call came in.
    pub front: FrontEnd,
    /// The agent run the call belongs to, if any.
    pub run_id: Option<&'a str>,
    /// For a call taken up again after it waited with a ticket: when it asked and what the
    /// wrappers kept with it then.
    pub resumed: Option<ResumedCall<'a>>,
}

/// A call taken up again after a person decided its ticket (possibly on another instance),
/// as a [`CallWrapper`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ResumedCall<'a> {
    /// When the call asked for approval, seconds since the Unix epoch.
    pub requested: u64,
    /// Who decided it.
    pub decided_by: &'a str,
    pub(crate) kept: &'a std::collections::BTreeMap<String, String>,
}

impl<'a> ResumedCall<'a> {
    /// What the wrapper named `wrapper` kept with the call when it began to wait
    /// ([`CallWrapper::keep`]).
    pub fn kept(&self, wrapper: &str) -> Option<&'a str> {
        self.kept.get(wrapper).map(String::as_str)
    }
}

/// Wraps a whole call, from finding its tool to its recorded outcome (refusals and waits
/// for approval included): for spans and timing. Wrappers nest in the order they were
/// added, the first outermost ([`RegistryBuilder::wrap_calls`](crate::RegistryBuilder::wrap_calls)).
///
/// A wrapper must await `call` to its end and return its outcome (it may look at it); the
/// call is recorded inside it either way.
pub trait CallWrapper: Send + Sync + 'static {
    /// The stage's name, for errors.
    fn name(&self) -> &str;

    /// The call's future, wrapped.
    fn wrap<'a>(
        &'a self,
        call: &WrappedCall<'_>,
        inner: BoxFuture<'a, ToolOutcome>,
    ) -> BoxFuture<'a, ToolOutcome>;

    /// Text to keep with a call that waits for a person's decision under a ticket, read
    /// back when it is taken up ([`ResumedCall::kept`]), wherever that happens: e.g. the
    /// trace context of the request that asked. Asked inside the wrapped call. The default
    /// keeps nothing.
    fn keep(&self) -> Option<String> {
        None
    }
}

/// Hides tools from callers: a hidden tool is in no list the caller gets (listings,
/// exports, search, suggestions, MCP `tools/list`) and a call to it is answered exactly as
/// a call to an unknown tool (unless the stage hides from [lists only](Self::lists_only)). It can only take away from what a caller's role sees
/// ([`RegistryBuilder::listing_stage`](crate::RegistryBuilder::listing_stage)).
pub trait ListingStage: Send + Sync + 'static {
    /// The stage's name, for errors.
    fn name(&self) -> &str;

    /// Whether `caller` must not see `tool`.
    fn hides(&self, caller: &Caller, tool: &ToolDefinition) -> bool;

    /// Whether the stage takes tools out of lists only: a call to a tool it hides still
    /// reaches the tool, whose own answer says why it cannot serve now (a tool out of
    /// service for a while, such as one of a device that is offline: `toolgate::devices`). The
    /// default is `false`: a hidden tool is answered as an unknown one. Only for tools the
    /// caller's role may run anyway; it never widens what a role sees.
    fn lists_only(&self) -> bool {
        false
    }
}
