//! Every direction of every provider format, against payloads shaped like the providers'
//! documented examples, and a round trip per provider: response → calls → batch → results.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate::formats::{self, Format, FormatErrorKind, anthropic, gemini, mcp, openai};
use toolgate::prelude::*;

#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// The weather now.
#[derive(Serialize, schemars::JsonSchema)]
struct Weather {
    temperature: f64,
    unit: Unit,
}

/// Get the current weather in a city.
#[tool(
    permission = "public",
    title = "Current weather",
    read_only,
    open_world
)]
fn get_weather(
    /// City name, e.g. "Paris".
    city: String,
    unit: Option<Unit>,
) -> Result<Weather, ToolError> {
    match city.as_str() {
        "Atlantis" => Err(ToolError::new(
            "not_found",
            "no weather station in Atlantis",
        )),
        _ => Ok(Weather {
            temperature: 21.5,
            unit: unit.unwrap_or(Unit::Celsius),
        }),
    }
}

/// Convert Celsius to Fahrenheit.
#[tool(permission = "public", read_only, idempotent)]
fn to_fahrenheit(celsius: f64) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}

/// Delete a city from the list.
#[tool(permission = "public", destructive)]
fn forget_city(city: String) -> String {
    format!("forgot {city}")
}

fn registry() -> Registry {
    Registry::builder().roles(["public"]).build().unwrap()
}

fn caller() -> Caller {
    Caller::new("u", "public")
}

fn find<'a>(tools: &'a Value, name: &str, pointer: &str) -> &'a Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool.pointer(pointer) == Some(&json!(name)))
        .unwrap()
}

// ---- tools out ------------------------------------------------------------------------

#[test]
fn openai_chat_tools() {
    let tools = registry().export(&caller(), Format::OpenAiChat { strict: false });
    assert_eq!(
        *find(&tools, "to_fahrenheit", "/function/name"),
        json!({
            "type": "function",
            "function": {
                "name": "to_fahrenheit",
                "description": "Convert Celsius to Fahrenheit.",
                "parameters": {
                    "type": "object",
                    "properties": {"celsius": {"type": "number", "format": "double"}},
                    "required": ["celsius"],
                    "additionalProperties": false
                },
                "strict": false
            }
        })
    );
}

#[test]
fn openai_chat_tools_strict() {
    let tools = registry().export(&caller(), Format::OpenAiChat { strict: true });
    let weather = find(&tools, "get_weather", "/function/name");
    assert_eq!(weather["function"]["strict"], true);
    assert_eq!(
        weather["function"]["parameters"],
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. \"Paris\"."},
                "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]}
            },
            "required": ["city", "unit"],
            "additionalProperties": false,
            "$defs": {"Unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}
        })
    );
}

#[test]
fn openai_responses_tools_are_flat() {
    let tools = registry().export(&caller(), Format::OpenAiResponses { strict: true });
    let tool = find(&tools, "to_fahrenheit", "/name");
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["strict"], true);
    assert_eq!(
        tool["parameters"]["properties"]["celsius"],
        json!({"type": "number"})
    );
    assert!(tool.get("function").is_none());
}

#[test]
fn anthropic_tools() {
    let tools = registry().export(&caller(), Format::Anthropic { strict: false });
    let tool = find(&tools, "to_fahrenheit", "/name");
    assert_eq!(
        *tool,
        json!({
            "name": "to_fahrenheit",
            "description": "Convert Celsius to Fahrenheit.",
            "input_schema": {
                "type": "object",
                "properties": {"celsius": {"type": "number", "format": "double"}},
                "required": ["celsius"],
                "additionalProperties": false
            }
        })
    );
    let strict = registry().export(&caller(), Format::Anthropic { strict: true });
    let weather = find(&strict, "get_weather", "/name");
    assert_eq!(weather["strict"], true);
    assert!(
        weather["input_schema"].get("$defs").is_none(),
        "references are inlined"
    );
}

#[test]
fn gemini_function_declarations() {
    let tools = registry().export(&caller(), Format::Gemini);
    let declarations = &tools[0]["functionDeclarations"];
    assert_eq!(
        *find(declarations, "get_weather", "/name"),
        json!({
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. \"Paris\"."},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "nullable": true}
                },
                "required": ["city"]
            }
        })
    );
    assert_eq!(
        find(declarations, "to_fahrenheit", "/name")["parameters"]["properties"]["celsius"],
        json!({"type": "number", "format": "double"})
    );
}

#[test]
fn mcp_tools_with_annotations_and_object_output_schemas() {
    let tools = registry().export(&caller(), Format::Mcp);
    let weather = find(&tools, "get_weather", "/name");
    assert_eq!(weather["title"], "Current weather");
    assert_eq!(
        weather["annotations"],
        json!({"title": "Current weather", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true})
    );
    assert_eq!(weather["outputSchema"]["type"], "object");
    assert_eq!(weather["inputSchema"]["required"], json!(["city"]));
    // A number result is wrapped in an object, in the schema and in structuredContent;
    // schemars' `double` is not a JSON Schema format, so MCP clients do not see it.
    let convert = find(&tools, "to_fahrenheit", "/name");
    assert_eq!(
        convert["outputSchema"],
        json!({"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]})
    );
    assert_eq!(
        convert["annotations"]["openWorldHint"], false,
        "not left to MCP's default of true"
    );
    let forget = find(&tools, "forget_city", "/name");
    assert_eq!(forget["annotations"]["destructiveHint"], true);
}

// ---- calls in, results out, round trips -----------------------------------------------

#[tokio::test]
async fn openai_chat_round_trip() {
    let registry = registry();
    let completion = json!({
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\",\"unit\":\"celsius\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "to_fahrenheit", "arguments": "{\"celsius\": 100"}},
                    {"id": "call_3", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Atlantis\"}"}}
                ]
            },
            "finish_reason": "tool_calls"
        }]
    });
    let calls = openai::calls_from_chat(&completion).unwrap();
    let outcomes = registry.run_batch(&caller(), calls).await;
    let messages = openai::tool_messages(&outcomes);
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[0],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"temperature\":21.5,\"unit\":\"celsius\"}"})
    );
    assert_eq!(messages[1]["tool_call_id"], "call_2");
    let error: Value = serde_json::from_str(messages[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(error["error"]["code"], "invalid_arguments");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    let error: Value = serde_json::from_str(messages[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        error,
        json!({"error": {"code": "not_found", "message": "no weather station in Atlantis"}})
    );
}

#[test]
fn openai_chat_without_calls_and_malformed_calls() {
    assert!(
        openai::calls_from_chat(&json!({"role": "assistant", "content": "Hello"}))
            .unwrap()
            .is_empty()
    );
    assert!(
        openai::calls_from_chat(&json!({"role": "assistant", "tool_calls": null}))
            .unwrap()
            .is_empty()
    );
    let error = openai::calls_from_chat(
        &json!({"tool_calls": [{"type": "function", "function": {"name": "x"}}]}),
    )
    .unwrap_err();
    assert_eq!(error.message, "tool_calls[0] has no string `id`");
    let error = openai::calls_from_chat(
        &json!({"tool_calls": [{"id": "c", "type": "custom", "custom": {}}]}),
    )
    .unwrap_err();
    assert!(error.message.contains("of type \"custom\""));
}

#[tokio::test]
async fn openai_responses_round_trip() {
    let response = json!({
        "id": "resp_1",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "to_fahrenheit", "arguments": "{\"celsius\":0}"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "nope", "arguments": "{}"}
        ]
    });
    let calls = openai::calls_from_responses(&response).unwrap();
    assert_eq!(calls.len(), 2);
    let outcomes = registry().run_batch(&caller(), calls).await;
    let items = openai::function_call_outputs(&outcomes);
    assert_eq!(
        items[0],
        json!({"type": "function_call_output", "call_id": "call_a", "output": "32.0"})
    );
    assert_eq!(items[1]["call_id"], "call_b");
    assert!(
        items[1]["output"]
            .as_str()
            .unwrap()
            .contains("unknown_tool")
    );
}

#[tokio::test]
async fn anthropic_round_trip() {
    let message = json!({
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll check both."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_02", "name": "to_fahrenheit", "input": {"celsius": "hot"}}
        ],
        "stop_reason": "tool_use"
    });
    let calls = anthropic::calls_from_message(&message).unwrap();
    let outcomes = registry().run_batch(&caller(), calls).await;
    let reply = anthropic::tool_result_message(&outcomes);
    assert_eq!(reply["role"], "user");
    let blocks = reply["content"].as_array().unwrap();
    assert_eq!(
        blocks[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01", "content": "{\"temperature\":21.5,\"unit\":\"celsius\"}", "is_error": false})
    );
    assert_eq!(blocks[1]["tool_use_id"], "toolu_02");
    assert_eq!(blocks[1]["is_error"], true);
}

#[tokio::test]
async fn gemini_round_trip() {
    let response = json!({
        "candidates": [{
            "content": {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris", "unit": "fahrenheit"}}},
                    {"functionCall": {"id": "fc-7", "name": "get_weather", "args": {"city": "Atlantis"}}}
                ]
            },
            "finishReason": "STOP"
        }]
    });
    let calls = gemini::calls_from_response(&response).unwrap();
    assert_eq!(calls[0].id, "gemini-call-0");
    assert_eq!(calls[1].id, "fc-7");
    let outcomes = registry().run_batch(&caller(), calls).await;
    let content = gemini::function_response_content(&outcomes);
    assert_eq!(
        content,
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": {"temperature": 21.5, "unit": "fahrenheit"}}}},
            {"functionResponse": {"id": "fc-7", "name": "get_weather", "response": {"error": {"code": "not_found", "message": "no weather station in Atlantis"}}}}
        ]})
    );
}

#[tokio::test]
async fn mcp_round_trip() {
    let registry = registry();
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "to_fahrenheit", "arguments": {"celsius": 100}}});
    let call = mcp::call_from_params(request["id"].to_string(), &request["params"]).unwrap();
    assert_eq!(call.id, "7");
    let outcome = registry.call(&caller(), call).await;
    let definition = registry.definition(&caller(), &outcome.tool).unwrap();
    assert_eq!(
        mcp::call_tool_result(&outcome, Some(&definition)),
        json!({"content": [{"type": "text", "text": "212.0"}], "structuredContent": {"result": 212.0}, "isError": false})
    );
    let failed = registry
        .call(
            &caller(),
            mcp::call_from_params("8", &json!({"name": "to_fahrenheit", "arguments": {}})).unwrap(),
        )
        .await;
    let result = mcp::call_tool_result(&failed, Some(&definition));
    assert_eq!(result["isError"], true);
    assert!(result.get("structuredContent").is_none());
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["error"]["code"], "invalid_arguments");
    assert!(
        text["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"celsius\" is a required property")
    );
    let weather = registry
        .call(
            &caller(),
            ToolCall::new("9", "get_weather", json!({"city": "Oslo"})),
        )
        .await;
    let definition = registry.definition(&caller(), "get_weather").unwrap();
    assert_eq!(
        mcp::call_tool_result(&weather, Some(&definition))["structuredContent"],
        json!({"temperature": 21.5, "unit": "celsius"})
    );
    assert!(mcp::call_from_params("1", &json!({"arguments": {}})).is_err());
}

// ---- free text ------------------------------------------------------------------------

#[test]
fn free_text_in_a_fenced_block_with_prose() {
    let text = "Let me look that up for you.\n\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```\nOne moment.";
    let calls = formats::calls_from_text(text).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("text-call-0", "get_weather")
    );
    assert_eq!(
        calls[0].arguments,
        toolgate::ToolArguments::Value(json!({"city": "Rome"}))
    );
}

#[test]
fn free_text_shapes() {
    let bare = r#"Calling {"tool": "to_fahrenheit", "args": {"celsius": 5}} now"#;
    assert_eq!(
        formats::calls_from_text(bare).unwrap()[0].name,
        "to_fahrenheit"
    );
    let openai_like = r#"{"function": {"name": "to_fahrenheit", "arguments": "{\"celsius\": 5}"}}"#;
    let calls = formats::calls_from_text(openai_like).unwrap();
    assert_eq!(
        calls[0].arguments,
        toolgate::ToolArguments::Text("{\"celsius\": 5}".into())
    );
    let list = r#"[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]"#;
    let names: Vec<_> = formats::calls_from_text(list)
        .unwrap()
        .into_iter()
        .map(|c| (c.id, c.name))
        .collect();
    assert_eq!(
        names,
        [
            ("text-call-0".into(), "a".into()),
            ("text-call-1".into(), "b".into())
        ]
    );
    let wrapped = r#"{"tool_calls": [{"name": "a", "parameters": {"x": 1}}]}"#;
    assert_eq!(formats::calls_from_text(wrapped).unwrap().len(), 1);
}

#[test]
fn free_text_with_nothing_or_something_ambiguous() {
    for text in [
        "The weather is nice.",
        r#"My dog is {"name": "Rex"}."#,
        "{not json}",
        "",
    ] {
        let error = formats::calls_from_text(text).unwrap_err();
        assert_eq!(error.kind, FormatErrorKind::NothingFound, "{text}");
        assert!(error.message.starts_with("no tool call found"));
    }
    let two = r#"First {"name": "a", "arguments": {}} and then {"name": "b", "arguments": {}}"#;
    let error = formats::calls_from_text(two).unwrap_err();
    assert_eq!(error.kind, FormatErrorKind::Ambiguous);
    assert!(
        error
            .message
            .contains("found 2 separate tool-call candidates")
    );
}

#[tokio::test]
async fn free_text_round_trip_through_the_registry() {
    let text = "```\n{\"name\": \"to_fahrenheit\", \"arguments\": {\"celsius\": 37}}\n```";
    let outcomes = registry()
        .run_batch(&caller(), formats::calls_from_text(text).unwrap())
        .await;
    assert_eq!(formats::result_text(&outcomes[0].result), "98.6");
}
