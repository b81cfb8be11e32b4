//! MCP: `Tool` objects for `tools/list`, `tools/call` params in, `CallToolResult` out.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::error::{FormatError, arguments_field, string_field};
use super::result_text;
use super::schema::mcp::standard_formats_only;
use crate::call::{ToolCall, ToolOutcome};
use crate::definition::ToolDefinition;

/// Key under which a non-object result is wrapped, in the output schema and in
/// `structuredContent`.
pub const RESULT_KEY: &str = "result";

/// One MCP `Tool`: `inputSchema`, `outputSchema` (object root, see [`output_schema`]),
/// `title`, and `annotations` from the hints. Schemas keep only the `format`s of JSON Schema
/// 2020-12 (not schemars' `int64`, `uint32`, ...: clients warn about unknown formats).
///
/// Every hint is sent explicitly: MCP's defaults (`destructiveHint` and `openWorldHint`
/// true) would otherwise claim more than the tool's author did.
pub fn tool(definition: &ToolDefinition) -> Value {
    let hints = definition.hints;
    let mut annotations = json!({
        "readOnlyHint": hints.read_only,
        "destructiveHint": hints.destructive,
        "idempotentHint": hints.idempotent,
        "openWorldHint": hints.open_world
    });
    let input_schema = standard_formats_only(&definition.input_schema);
    let mut entry = json!({"name": definition.name, "description": definition.description, "inputSchema": input_schema});
    if let Some(title) = &definition.title {
        entry["title"] = Value::String(title.clone());
        annotations["title"] = Value::String(title.clone());
    }
    if let Some(schema) = output_schema(definition) {
        entry["outputSchema"] = standard_formats_only(&schema);
    }
    entry["annotations"] = annotations;
    entry
}

/// `Tool` objects for a whole list.
pub fn tools(tools: &[Arc<ToolDefinition>]) -> Value {
    Value::Array(tools.iter().map(|definition| tool(definition)).collect())
}

/// The output schema with an object root, as MCP requires: a schema whose root is not an
/// object (a number, a string, a list, an optional) is wrapped as
/// `{"type": "object", "properties": {"result": ...}, "required": ["result"]}`, its `$defs`
/// moved to the new root.
pub fn output_schema(definition: &ToolDefinition) -> Option<Value> {
    let schema = definition.output_schema.as_ref()?;
    if is_object_root(schema) {
        return Some(schema.clone());
    }
    let mut inner = schema.clone();
    let defs = inner.as_object_mut().and_then(|map| map.remove("$defs"));
    let mut wrapper =
        json!({"type": "object", "properties": {RESULT_KEY: inner}, "required": [RESULT_KEY]});
    if let Some(defs) = defs {
        wrapper["$defs"] = defs;
    }
    Some(wrapper)
}

fn is_object_root(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("object"))
}

/// The `structuredContent` of a successful result: the value itself when the output schema
/// has an object root, `{"result": value}` when it was wrapped, nothing without an output
/// schema.
pub fn structured_content(definition: &ToolDefinition, value: &Value) -> Option<Value> {
    let schema = definition.output_schema.as_ref()?;
    if is_object_root(schema) {
        Some(value.clone())
    } else {
        let mut wrapped = Map::new();
        wrapped.insert(RESULT_KEY.to_owned(), value.clone());
        Some(Value::Object(wrapped))
    }
}

/// A `tools/call` request's params (`{"name", "arguments"}`) as a call with the request's id.
pub fn call_from_params(
    request_id: impl Into<crate::SmolStr>,
    params: &Value,
) -> Result<ToolCall, FormatError> {
    let name = string_field(params, "name", "the `tools/call` params")?;
    Ok(ToolCall::new(
        request_id,
        name,
        arguments_field(params, "arguments"),
    ))
}

/// A `CallToolResult`: content blocks as they are (see [`content`](crate::content)), else
/// the result as text content, `structuredContent` when the tool has an
/// output schema, and `isError: true` for every failure, so the model can read and fix it.
pub fn call_tool_result(outcome: &ToolOutcome, definition: Option<&ToolDefinition>) -> Value {
    if let Some(blocks) = outcome.content() {
        return json!({"content": blocks, "isError": false});
    }
    let mut result = json!({
        "content": [{"type": "text", "text": result_text(&outcome.result)}],
        "isError": outcome.result.is_err()
    });
    if let (Ok(value), Some(definition)) = (&outcome.result, definition)
        && let Some(structured) = structured_content(definition, value)
    {
        result["structuredContent"] = structured;
    }
    result
}
