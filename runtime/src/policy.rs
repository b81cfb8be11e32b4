//! Deciding whether a call may run: allow, ask a person first, or deny.

use std::fmt;

use serde_json::Value;

use crate::caller::Caller;
use crate::definition::{Risk, ToolDefinition};
use crate::stage::ShownArguments;

/// What a policy decided for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Run it only once a person approved it; the reason is shown to them.
    RequireApproval {
        /// Why approval is needed.
        reason: String,
    },
    /// Do not run it; the reason goes back to the model.
    Deny {
        /// Why the call is refused.
        reason: String,
    },
}

/// What a policy sees of a call: the tool, who calls, with which (valid) arguments.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct PolicyRequest<'a> {
    /// The tool's definition: name, group, risk, hints.
    pub tool: &'a ToolDefinition,
    /// The caller and its role.
    pub caller: &'a Caller,
    arguments: &'a dyn ShownArguments,
}

impl<'a> PolicyRequest<'a> {
    /// A request for `tool`, called by `caller` with `arguments`: for testing a policy.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolgate::policy::{Decision, DefaultPolicy, Policy, PolicyRequest};
    /// use toolgate::{Caller, ToolDefinition};
    ///
    /// let schema = json!({"type": "object"});
    /// let mut tool = ToolDefinition::new("delete_file", "Deletes a file.", "staff", schema);
    /// tool.hints.destructive = true;
    /// let caller = Caller::new("ana", "staff");
    /// let arguments = json!({"path": "notes.txt"});
    /// let request = PolicyRequest::new(&tool, &caller, &arguments);
    /// assert!(matches!(DefaultPolicy::default().decide(&request), Decision::RequireApproval { .. }));
    /// ```
    pub fn new(tool: &'a ToolDefinition, caller: &'a Caller, arguments: &'a Value) -> Self {
        Self::lazy(tool, caller, arguments)
    }

    /// Made by the registry, which reads the arguments into a value only if they are asked for.
    pub(crate) fn lazy(
        tool: &'a ToolDefinition,
        caller: &'a Caller,
        arguments: &'a dyn ShownArguments,
    ) -> Self {
        PolicyRequest {
            tool,
            caller,
            arguments,
        }
    }

    /// The arguments, already checked against the schema, `#[secret]` ones in clear. Made
    /// into a JSON value when first asked for: a policy that decides by the tool and the
    /// caller alone costs a call no reading of them.
    pub fn arguments(&self) -> &'a Value {
        self.arguments.shown(true)
    }
}

impl fmt::Debug for PolicyRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyRequest")
            .field("tool", &self.tool.name)
            .field("caller", self.caller)
            .finish_non_exhaustive()
    }
}

/// Decides per call. Implemented for closures `Fn(&PolicyRequest) -> Decision`.
///
/// ```
/// use toolgate::policy::{Decision, PolicyRequest};
///
/// // Staff may do anything; everyone else needs approval for tools of the "billing" group.
/// let policy = |request: &PolicyRequest| {
///     if request.caller.role() != "staff" && request.tool.group.as_deref() == Some("billing") {
///         Decision::RequireApproval { reason: "billing changes need a person's approval".into() }
///     } else {
///         Decision::Allow
///     }
/// };
/// let registry = toolgate::Registry::builder().roles(["public", "staff"]).policy(policy).build();
/// # let _ = registry;
/// ```
pub trait Policy: Send + Sync + 'static {
    /// The decision for one call.
    fn decide(&self, request: &PolicyRequest<'_>) -> Decision;
}

impl<F> Policy for F
where
    F: Fn(&PolicyRequest<'_>) -> Decision + Send + Sync + 'static,
{
    fn decide(&self, request: &PolicyRequest<'_>) -> Decision {
        self(request)
    }
}

/// The one-line setting for the default policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolicyMode {
    /// Everything runs; no approvals (trusted, unattended settings).
    Auto,
    /// Read-only tools run; `destructive` tools and `risk = "high" | "critical"` need
    /// approval; others run. The default.
    #[default]
    Prompt,
    /// Like `Prompt`, but what would need approval is refused instead.
    Deny,
}

impl fmt::Display for PolicyMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicyMode::Auto => "auto",
            PolicyMode::Prompt => "prompt",
            PolicyMode::Deny => "deny",
        })
    }
}

/// The policy users expect, set by a [`PolicyMode`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultPolicy {
    /// How risky calls are treated.
    pub mode: PolicyMode,
}

impl DefaultPolicy {
    /// Why a tool is risky, if it is.
    fn risky(tool: &ToolDefinition) -> Option<String> {
        if tool.hints.read_only {
            return None;
        }
        if tool.hints.destructive {
            return Some(format!("`{}` is destructive", tool.name));
        }
        if tool.risk >= Risk::High {
            return Some(format!("`{}` is {} risk", tool.name, tool.risk));
        }
        None
    }
}

impl Policy for DefaultPolicy {
    fn decide(&self, request: &PolicyRequest<'_>) -> Decision {
        match (self.mode, Self::risky(request.tool)) {
            (PolicyMode::Auto, _) | (_, None) => Decision::Allow,
            (PolicyMode::Prompt, Some(reason)) => Decision::RequireApproval {
                reason: format!("{reason} and needs a person's approval"),
            },
            (PolicyMode::Deny, Some(reason)) => Decision::Deny {
                reason: format!("{reason}, and this application does not run such tools"),
            },
        }
    }
}
