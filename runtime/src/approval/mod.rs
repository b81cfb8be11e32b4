//! Approval of risky calls: in process (an async [`Approver`]) or across requests (a signed,
//! single-use ticket, redeemed with [`Registry::approve`](crate::Registry::approve) or
//! [`Registry::deny`](crate::Registry::deny)).

mod caller;
mod grants;
mod pending;
pub(crate) mod ticket;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

pub(crate) use caller::confirmation_required;
pub use caller::{AskCaller, CONFIRMATION_KEY, Confirmation, answer_of, confirmation_form};
pub use grants::{Grant, GrantStore, MemoryGrantStore};
pub use pending::{DecidedCall, MemoryPendingStore, PendingCall, PendingStore};
pub use ticket::TicketError;
pub(crate) use ticket::TicketSigner;

use crate::caller::Caller;
use crate::definition::ToolDefinition;

/// A call waiting for a person's answer.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: Arc<ToolDefinition>,
    /// The arguments (valid against the tool's schema), `#[secret]` ones redacted: an
    /// approver decides without seeing them, and the call runs with the real values.
    pub arguments: Value,
    /// Who made the call.
    pub caller: Caller,
    /// The call's id.
    pub call_id: String,
    /// Why the policy wants approval.
    pub reason: String,
    /// What the tool itself says the call will do (see [`Tool::review`](crate::Tool::review)),
    /// e.g. the full command line of a program.
    pub review: Option<Value>,
}

/// A person's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalAnswer {
    /// Run the call as it is.
    Approve,
    /// Run it with these arguments instead (checked against the schema again). A secret
    /// argument left as `"[redacted]"` keeps its real value.
    ApproveWithArguments(Value),
    /// Run it, and every later call of this tool by this caller, without asking again (a
    /// [`Grant`], kept in the registry's [`GrantStore`]: in memory by default, or in a
    /// database where it survives restarts).
    ApproveAlways,
    /// Do not run it; the reason goes back to the model.
    Deny {
        /// Why.
        reason: String,
    },
}

/// The future of an approval.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = ApprovalAnswer> + Send + 'static>>;

/// Asks a person (or another system) whether a call may run. Implemented for async closures
/// `Fn(ApprovalRequest) -> impl Future<Output = ApprovalAnswer>`.
///
/// ```
/// use toolgate::approval::{ApprovalAnswer, ApprovalRequest};
///
/// let approver = |request: ApprovalRequest| async move {
///     if request.caller.role() == "admin" {
///         ApprovalAnswer::Approve
///     } else {
///         ApprovalAnswer::Deny { reason: "only admins may do that".into() }
///     }
/// };
/// let registry = toolgate::Registry::builder().roles(["user", "admin"]).approver("policy-bot", approver).build();
/// # let _ = registry;
/// ```
pub trait Approver: Send + Sync + 'static {
    /// The answer for one call.
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture;
}

impl<F, Fut> Approver for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture {
        Box::pin(self(request))
    }
}
