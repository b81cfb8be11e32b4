//! One registry, every provider: export the tools in each provider's format, read a model's
//! tool calls from a response shaped like that provider's, run them, and write the results
//! back in that provider's shape.
//!
//! Run with `cargo run -p toolgate-examples --bin providers`.

use serde_json::{Value, json};
use toolgate::formats::{self, Format, anthropic, gemini, mcp, openai};
use toolgate::prelude::*;

/// Convert a temperature from Celsius to Fahrenheit.
#[tool(permission = "public", read_only, idempotent)]
fn to_fahrenheit(
    /// Degrees Celsius.
    celsius: f64,
) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}

fn show(title: &str, value: &Value) {
    println!(
        "--- {title}\n{}\n",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder().roles(["public"]).build()?;
    let caller = Caller::new("demo", "public");

    // OpenAI Chat Completions.
    show(
        "OpenAI tools (strict)",
        &registry.export(&caller, Format::OpenAiChat { strict: true }),
    );
    let completion = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "to_fahrenheit", "arguments": "{\"celsius\": 100}"}}
    ]}}]});
    let outcomes = registry
        .run_batch(&caller, openai::calls_from_chat(&completion)?)
        .await;
    show(
        "OpenAI tool messages",
        &Value::Array(openai::tool_messages(&outcomes)),
    );

    // OpenAI Responses API.
    let response = json!({"output": [{"type": "function_call", "call_id": "call_2", "name": "to_fahrenheit", "arguments": "{\"celsius\": 0}"}]});
    let outcomes = registry
        .run_batch(&caller, openai::calls_from_responses(&response)?)
        .await;
    show(
        "OpenAI Responses items",
        &Value::Array(openai::function_call_outputs(&outcomes)),
    );

    // Anthropic Messages.
    show(
        "Anthropic tools",
        &registry.export(&caller, Format::Anthropic { strict: false }),
    );
    let message = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "to_fahrenheit", "input": {"celsius": "hot"}}]});
    let outcomes = registry
        .run_batch(&caller, anthropic::calls_from_message(&message)?)
        .await;
    show(
        "Anthropic tool_result message",
        &anthropic::tool_result_message(&outcomes),
    );

    // Gemini.
    show("Gemini tools", &registry.export(&caller, Format::Gemini));
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "to_fahrenheit", "args": {"celsius": 37}}}]}}]});
    let outcomes = registry
        .run_batch(&caller, gemini::calls_from_response(&response)?)
        .await;
    show(
        "Gemini functionResponse content",
        &gemini::function_response_content(&outcomes),
    );

    // MCP.
    show("MCP tools", &registry.export(&caller, Format::Mcp));
    let call = mcp::call_from_params(
        "1",
        &json!({"name": "to_fahrenheit", "arguments": {"celsius": -40}}),
    )?;
    let outcome = registry.call(&caller, call).await;
    let definition = registry.definition(&caller, &outcome.tool);
    show(
        "MCP CallToolResult",
        &mcp::call_tool_result(&outcome, definition.as_deref()),
    );

    // A model without native tool calling, writing JSON in its text.
    let text = "Sure, converting now:\n```json\n{\"name\": \"to_fahrenheit\", \"arguments\": {\"celsius\": 21}}\n```";
    let outcomes = registry
        .run_batch(&caller, formats::calls_from_text(text)?)
        .await;
    println!(
        "--- free text result\n{}",
        formats::result_text(&outcomes[0].result)
    );
    Ok(())
}
