//! A device's tool at the hub: its definition as the hub offers it, and its calls routed
//! over the device's link.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, Tool as RemoteTool};
use serde_json::{Map, Value};

use super::hub::{GROUP_PREFIX, SEPARATOR, Slot};
use crate::adapters::mcp::client::{definition_of, result_of};
use crate::context::ToolContext;
use crate::definition::{Hints, Risk, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::tool::{Tool, ToolFuture};

/// The most of a device's description of a tool that the hub passes on (a device's text
/// reaches the model; a longer one is cut, and says so).
const MAX_DESCRIPTION: usize = 1_000;

/// One tool a device offers, as the hub offers it.
pub(super) struct DeviceTool {
    slot: Arc<Slot>,
    remote_name: String,
    definition: ToolDefinition,
    timeout: Duration,
}

impl DeviceTool {
    /// The hub's tool for what the device announced, or `None` if the hub does not accept
    /// it. The hub's settings decide its name, permission, hints and risk.
    pub(super) fn accepted(
        slot: &Arc<Slot>,
        remote: &RemoteTool,
        timeout: Duration,
    ) -> Option<Self> {
        let rules = &slot.rules;
        if !rules.accept.iter().any(|name| name == &*remote.name) {
            return None;
        }
        let prefix = format!("{}{SEPARATOR}", rules.id);
        let permission = rules.permission_of(&remote.name);
        let mut definition = definition_of(remote, &prefix, permission, &rules.id);
        // The device's own words reach the model: said as its, and kept short.
        let said = crate::util::bounded::clip(&definition.description, MAX_DESCRIPTION);
        definition.description = format!("On the device `{}`: {said}", rules.id);
        definition.title = definition
            .title
            .map(|title| crate::util::bounded::clip(&title, 100).into_owned());
        definition.group = Some(format!("{GROUP_PREFIX}{}", rules.id));
        definition.tags.push(format!("{GROUP_PREFIX}{}", rules.id));
        // The hub's settings alone decide what the tool is taken to do: the device's word
        // (read-only, harmless) changes nothing at the hub.
        let vouched = rules.read_only.iter().any(|name| name == &*remote.name);
        let approve = rules.approve.iter().any(|name| name == &*remote.name);
        definition.hints = Hints {
            read_only: vouched,
            destructive: approve,
            ..definition.hints
        };
        definition.risk = match (vouched, approve) {
            (true, _) => Risk::Low,
            (false, true) => Risk::High,
            (false, false) => Risk::Medium,
        };
        // A routed result is a value: the device's structured result, or its text.
        definition.returns_content = false;
        definition.output_schema = None;
        Some(DeviceTool {
            slot: Arc::clone(slot),
            remote_name: remote.name.to_string(),
            definition,
            timeout,
        })
    }

    /// The tool's name at the hub.
    pub(super) fn name(&self) -> &str {
        &self.definition.name
    }
}

impl Tool for DeviceTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn call(&self, _context: ToolContext, arguments: Value) -> ToolFuture {
        let (slot, name, timeout) = (
            Arc::clone(&self.slot),
            self.remote_name.clone(),
            self.timeout,
        );
        Box::pin(async move {
            let result = routed(&slot, name, arguments, timeout).await?;
            if result.is_error == Some(true) {
                return Err(failed_there(slot.id(), &result));
            }
            // One text block (or a structured result) is read as the value it holds; other
            // content (images, several blocks) is passed on as its blocks.
            let one_text = result.content.len() == 1 && result.content[0].as_text().is_some();
            let structured = result.structured_content.is_some() || one_text;
            result_of(result, structured)
        })
    }
}

/// The call sent over the device's link, and its answer; a device that is offline, leaves
/// during the call, fails or takes too long is an error naming it.
async fn routed(
    slot: &Slot,
    tool: String,
    arguments: Value,
    timeout: Duration,
) -> Result<rmcp::model::CallToolResult, ToolError> {
    let device = slot.id();
    let Some(link) = slot.link() else {
        return Err(offline(device));
    };
    let mut params = CallToolRequestParams::new(tool);
    params.arguments = Some(match arguments {
        Value::Object(map) => map,
        _ => Map::new(),
    });
    let answer = tokio::select! {
        answer = tokio::time::timeout(timeout, link.peer.call_tool_once(params)) => answer,
        () = link.ended.cancelled() => return Err(dropped(device)),
    };
    match answer {
        Ok(Ok(CallToolResponse::Complete(result))) => {
            slot.heard();
            Ok(result)
        }
        Ok(Ok(_)) => Err(ToolError::execution(format!(
            "the device `{device}` asked for more input, which a routed call cannot give"
        ))),
        // The link closing fails the request too; said the same way.
        Ok(Err(_)) if link.ended.is_cancelled() || link.peer.is_transport_closed() => {
            Err(dropped(device))
        }
        Ok(Err(error)) => Err(ToolError::new(
            "device_failed",
            format!("the device `{device}` could not run the call: {error}"),
        )),
        Err(_) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "the device `{device}` did not answer within {:.1} s; the call may still be running there",
                timeout.as_secs_f64()
            ),
        )),
    }
}

/// The device's own error for a call (its registry refused it, or the tool failed there),
/// said as the device's: its code is in the message, not taken for one of the hub's.
fn failed_there(device: &str, result: &rmcp::model::CallToolResult) -> ToolError {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.as_str()))
        .collect();
    let text = text.join("\n");
    let said = serde_json::from_str::<Value>(&text).ok();
    let error = said.as_ref().map(|said| &said["error"]);
    let message = match error.and_then(|e| Some((e["code"].as_str()?, e["message"].as_str()?))) {
        Some((code, message)) => format!("the device `{device}` answered `{code}`: {message}"),
        None if text.is_empty() => format!("the device `{device}` answered with an error"),
        None => format!("the device `{device}` answered: {text}"),
    };
    ToolError::execution(crate::util::bounded::clip(&message, 4096).into_owned())
}

/// A call to a device that is not connected now.
fn offline(device: &str) -> ToolError {
    ToolError::new(
        "device_offline",
        format!("the device `{device}` is offline; try again once it is connected"),
    )
}

/// A call whose device's link closed before it answered.
fn dropped(device: &str) -> ToolError {
    ToolError::new(
        "device_disconnected",
        format!(
            "the device `{device}` went offline during the call; whether it ran there is unknown (check before calling again)"
        ),
    )
}
