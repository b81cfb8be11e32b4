//! The rules on a call's path: a call stage (`call`, run after the application's own, on
//! the arguments as they will run), a listing stage (`see`: a tool no rule lets a caller
//! see is unknown to it), and the check of who may decide a waiting call (`approve`).

use std::sync::Arc;

use serde_json::Value;

use super::decide::{Origin, Verdict};
use super::rules::CedarRules;
use crate::caller::Caller;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::stage::{CallStage, ListingStage, StageCall, StageVerdict};

/// The name the rules' stage has in records and errors.
const NAME: &str = "cedar";

/// The rules as a call stage.
pub(crate) struct CallRules(pub(crate) Arc<CedarRules>);

impl CallStage for CallRules {
    fn name(&self) -> &str {
        NAME
    }

    fn check(&self, call: &StageCall<'_>) -> StageVerdict {
        self.check_explained(call).0
    }

    fn check_explained(&self, call: &StageCall<'_>) -> (StageVerdict, Option<String>) {
        let rules = &self.0;
        let origin = Origin {
            front: call.front.as_str(),
            run_id: call.run_id,
        };
        let verdict = rules.compiled.load().call(
            call.caller,
            &call.tool.name,
            call.arguments(),
            &origin,
            rules.utc_offset(),
        );
        match verdict {
            Verdict::Permit {
                rules,
                approval: None,
            } => (StageVerdict::Continue, Some(permitted(&rules))),
            Verdict::Permit {
                rules,
                approval: Some(reason),
            } => (
                StageVerdict::RequireApproval { reason },
                Some(permitted(&rules)),
            ),
            Verdict::Forbid { rules, reason } => {
                let error = ToolError::new(
                    ErrorCode::Denied,
                    format!("this call is not allowed: {reason}"),
                );
                (StageVerdict::Refuse(error), Some(forbidden(&rules)))
            }
        }
    }

    /// Rules compare arguments as they are, secret ones too (they are never shown).
    fn needs_secrets(&self) -> bool {
        true
    }
}

/// The rules as a listing stage.
pub(crate) struct SeeRules(pub(crate) Arc<CedarRules>);

impl ListingStage for SeeRules {
    fn name(&self) -> &str {
        NAME
    }

    fn hides(&self, caller: &Caller, tool: &ToolDefinition) -> bool {
        let rules = &self.0;
        !rules
            .compiled
            .load()
            .may_see(caller, &tool.name, rules.utc_offset())
    }
}

impl CedarRules {
    /// Whether `approver` may decide `requester`'s waiting call of `tool` with `arguments`.
    pub(crate) fn may_approve(
        &self,
        approver: &Caller,
        requester: &Caller,
        tool: &str,
        arguments: &Value,
    ) -> bool {
        let verdict =
            self.compiled
                .load()
                .approve(approver, requester, tool, arguments, self.utc_offset());
        matches!(verdict, Verdict::Permit { .. })
    }
}

fn permitted(rules: &[String]) -> String {
    format!("permitted by {}", listed(rules))
}

fn forbidden(rules: &[String]) -> String {
    match rules.is_empty() {
        true => "no rule permits the call".to_owned(),
        false => format!("forbidden by {}", listed(rules)),
    }
}

fn listed(rules: &[String]) -> String {
    rules
        .iter()
        .map(|rule| format!("`{rule}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
