//! The hub's steps on every call's path: an offline device's tools leave the lists, and a
//! device's arguments take only the values its settings allow.

use serde_json::Value;

use super::hub::DeviceHub;
use crate::caller::Caller;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::stage::{CallStage, ListingStage, StageCall, StageVerdict};

/// Takes the tools of offline devices out of every list (from lists only: a call to one
/// reaches it, and it answers `device_offline` at once).
pub(super) struct OfflineDevices(pub(super) DeviceHub);

impl ListingStage for OfflineDevices {
    fn name(&self) -> &str {
        "offline_devices"
    }

    fn hides(&self, _caller: &Caller, tool: &ToolDefinition) -> bool {
        self.0
            .slot_of_group(tool.group.as_deref())
            .is_some_and(|slot| !slot.is_online())
    }

    fn lists_only(&self) -> bool {
        true
    }
}

/// A device's own rules on a call of its tools: arguments take only the values its
/// settings allow ([`Device::allow_values`](super::Device::allow_values)), and the tools it
/// names need a person's approval ([`Device::approve`](super::Device::approve)).
pub(super) struct DeviceRules(pub(super) DeviceHub);

impl CallStage for DeviceRules {
    fn name(&self) -> &str {
        "device_rules"
    }

    fn check(&self, call: &StageCall<'_>) -> StageVerdict {
        let Some(slot) = self.0.slot_of_group(call.tool.group.as_deref()) else {
            return StageVerdict::Continue;
        };
        for allowed in &slot.rules.values {
            let Some(value) = call.arguments().get(&allowed.argument) else {
                continue;
            };
            // Only text is matched against the patterns: any other value (a number, an
            // object, a list holding one) is refused, whatever the tool's schema admits.
            let Some(values) = texts_in(value) else {
                let message = format!(
                    "the device `{}` takes only text, or a list of texts, for `{}`",
                    slot.id(),
                    allowed.argument
                );
                return StageVerdict::Refuse(ToolError::new(ErrorCode::Denied, message));
            };
            if let Some(refused) = values.into_iter().find(|value| !allowed.admits(value)) {
                let message = format!(
                    "the device `{}` does not allow `{}` = `{}`; allowed: {}",
                    slot.id(),
                    allowed.argument,
                    crate::util::bounded::clip(refused, 200),
                    allowed.patterns.join(", ")
                );
                return StageVerdict::Refuse(ToolError::new(ErrorCode::Denied, message));
            }
        }
        let approved = slot
            .approved
            .iter()
            .position(|name| *name == call.tool.name);
        if let Some(tool) = approved.map(|at| &slot.rules.approve[at]) {
            let reason = format!(
                "the hub asks approval for `{tool}` on the device `{}`",
                slot.id()
            );
            return StageVerdict::RequireApproval { reason };
        }
        StageVerdict::Continue
    }
}

/// The text of `value`, or of each item of a list of texts; `None` for anything else.
fn texts_in(value: &Value) -> Option<Vec<&str>> {
    match value {
        Value::String(text) => Some(vec![text.as_str()]),
        Value::Array(items) => items.iter().map(Value::as_str).collect(),
        _ => None,
    }
}
