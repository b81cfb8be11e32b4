//! The fixture tools of the official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! as a toolgate registry, served over Streamable HTTP at `/mcp`: what the suite's server
//! scenarios call, written the way an application writes its tools.
//!
//! ```sh
//! cargo run -p toolgate-example-mcp --bin mcp_conformance -- 127.0.0.1:3000
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3000/mcp
//! ```

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use axum::http::request::Parts;
use serde_json::{Value, json};
use toolgate::content::Content;
use toolgate::http::AuthError;
use toolgate::input::{Input, InputKind, InputRequest, InputRequired};
use toolgate::mcp::{McpHttpOptions, ServerIdentity};
use toolgate::prelude::*;
use toolgate::progress::LogLevel;
use toolgate::{FnTool, ToolDefinition};

/// A 1×1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

fn red_pixel() -> Content {
    Content::Image {
        data: RED_PIXEL_PNG.into(),
        mime_type: "image/png".into(),
    }
}

/// A tenth of a second of silence, 8 kHz 8-bit mono WAV.
fn silence_wav() -> Vec<u8> {
    let samples = vec![128u8; 800];
    let mut wav = Vec::with_capacity(44 + samples.len());
    let length = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&length(36 + samples.len()));
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes()); // samples per second
    wav.extend_from_slice(&8000u32.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&length(samples.len()));
    wav.extend_from_slice(&samples);
    wav
}

/// Answers with a simple text.
#[tool(permission = "public", read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Answers with an image.
#[tool(permission = "public", read_only)]
fn test_image_content() -> Content {
    red_pixel()
}

/// Answers with a sound.
#[tool(permission = "public", read_only)]
fn test_audio_content() -> Content {
    Content::audio(silence_wav(), "audio/wav")
}

/// Answers with an embedded resource.
#[tool(permission = "public", read_only)]
fn test_embedded_resource() -> Content {
    Content::resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Answers with text, an image and a resource.
#[tool(permission = "public", read_only)]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        red_pixel(),
        Content::resource_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Always fails.
#[tool(permission = "public", read_only)]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::execution(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress: 0, 50 and 100 of 100.
#[tool(permission = "public", read_only)]
async fn test_tool_with_progress(#[ctx] context: ToolContext) -> &'static str {
    for done in [0.0, 50.0, 100.0] {
        context.progress(done, Some(100.0), "");
        if done < 100.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    "Progress reported: 0, 50 and 100 of 100."
}

/// Logs three messages while it runs.
#[tool(permission = "public", read_only)]
async fn test_tool_with_logging(#[ctx] context: ToolContext) -> &'static str {
    context.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    context.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    context.log(LogLevel::Info, "Tool execution completed");
    "Logged three messages."
}

/// Asks the client's model, which it must be able to ask.
#[tool(permission = "public", read_only)]
fn test_sampling(
    /// The prompt for the model.
    prompt: String,
    #[ctx] input: Input,
) -> Result<String, ToolError> {
    if let Some(text) = input.sampled_text("answer") {
        return Ok(format!("LLM response: {text}"));
    }
    if !input.can(InputKind::Sampling) {
        return Err(ToolError::execution(
            "the client cannot be asked for sampling",
        ));
    }
    Err(InputRequired::new()
        .ask("answer", InputRequest::sample(prompt, 100))
        .into())
}

/// Asks the person for a user name and an email address.
#[tool(permission = "public", read_only)]
fn test_elicitation(
    /// What to tell the person.
    message: String,
    #[ctx] input: Input,
) -> Result<String, ToolError> {
    if let Some(answer) = input.response("form") {
        return Ok(format!("User response: {answer}"));
    }
    if !input.can(InputKind::Elicitation) {
        return Err(ToolError::execution(
            "the client cannot be asked for a form",
        ));
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    Err(InputRequired::new()
        .ask("form", InputRequest::form(message, schema))
        .into())
}

/// Asks for a form whose fields have default values.
#[tool(permission = "public", read_only)]
fn test_elicitation_sep1034_defaults(#[ctx] input: Input) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }
    });
    elicitation_completed(&input, "Fill in your details", schema)
}

/// Asks for a form with every kind of choice.
#[tool(permission = "public", read_only)]
fn test_elicitation_sep1330_enums(#[ctx] input: Input) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
        }
    });
    elicitation_completed(&input, "Pick your options", schema)
}

fn elicitation_completed(input: &Input, message: &str, schema: Value) -> Result<String, ToolError> {
    match input.response("form") {
        Some(answer) => Ok(format!(
            "Elicitation completed: action={}, content={}",
            answer["action"].as_str().unwrap_or("unknown"),
            answer.get("content").cloned().unwrap_or(json!({}))
        )),
        None => Err(InputRequired::new()
            .ask("form", InputRequest::form(message, schema))
            .into()),
    }
}

fn name_form(message: &str, field: &str) -> InputRequest {
    let schema =
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]});
    InputRequest::form(message, schema)
}

/// Asks the person's name, then greets them.
#[tool(permission = "public", read_only)]
fn test_input_required_result_elicitation(#[ctx] input: Input) -> Result<String, ToolError> {
    match input.accepted("user_name") {
        Some(form) => Ok(format!(
            "Hello, {}!",
            form["name"].as_str().unwrap_or("stranger")
        )),
        None => Err(InputRequired::new()
            .ask("user_name", name_form("What is your name?", "name"))
            .into()),
    }
}

/// Asks the client's model the capital of France.
#[tool(permission = "public", read_only)]
fn test_input_required_result_sampling(#[ctx] input: Input) -> Result<String, ToolError> {
    match input.sampled_text("capital_question") {
        Some(text) => Ok(format!("The model says: {text}")),
        None => Err(InputRequired::new()
            .ask(
                "capital_question",
                InputRequest::sample("What is the capital of France?", 100),
            )
            .into()),
    }
}

/// Asks the client's roots.
#[tool(permission = "public", read_only)]
fn test_input_required_result_list_roots(#[ctx] input: Input) -> Result<String, ToolError> {
    match input.response("client_roots") {
        Some(answer) => Ok(format!("The client's roots: {}", roots_of(answer))),
        None => Err(InputRequired::new()
            .ask("client_roots", InputRequest::roots())
            .into()),
    }
}

fn roots_of(answer: &Value) -> String {
    let roots = answer["roots"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let uris: Vec<&str> = roots
        .iter()
        .filter_map(|root| root["uri"].as_str())
        .collect();
    uris.join(", ")
}

/// Asks for a confirmation, keeping state between the rounds.
#[tool(permission = "public", read_only)]
fn test_input_required_result_request_state(#[ctx] input: Input) -> Result<String, ToolError> {
    let kept = input.state().and_then(|state| state["round"].as_u64()) == Some(1);
    match (input.response("confirm"), kept) {
        (Some(answer), true) => Ok(format!("state-ok: confirmed {answer}")),
        _ => {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            Err(InputRequired::new()
                .ask("confirm", InputRequest::form("Please confirm", schema))
                .state(json!({"round": 1}))
                .into())
        }
    }
}

/// Asks a form, the client's model and its roots at once.
#[tool(permission = "public", read_only)]
fn test_input_required_result_multiple_inputs(#[ctx] input: Input) -> Result<String, ToolError> {
    let keys = ["user_name", "greeting", "client_roots"];
    if keys.iter().all(|key| input.response(key).is_some()) {
        return Ok(format!(
            "All answered: {}, {}, {}",
            input.response("user_name").unwrap_or(&Value::Null),
            input.sampled_text("greeting").unwrap_or_default(),
            input
                .response("client_roots")
                .map(roots_of)
                .unwrap_or_default()
        ));
    }
    Err(InputRequired::new()
        .ask("user_name", name_form("What is your name?", "name"))
        .ask("greeting", InputRequest::sample("Generate a greeting", 50))
        .ask("client_roots", InputRequest::roots())
        .state(json!({"asked": keys}))
        .into())
}

/// Asks a name, then a colour, then answers: three rounds.
#[tool(permission = "public", read_only)]
fn test_input_required_result_multi_round(#[ctx] input: Input) -> Result<String, ToolError> {
    let round = input
        .state()
        .and_then(|state| state["round"].as_u64())
        .unwrap_or(0);
    match (round, input.accepted("step1"), input.accepted("step2")) {
        (1, Some(step1), _) => Err(InputRequired::new()
            .ask(
                "step2",
                name_form("Step 2: What is your favorite color?", "color"),
            )
            .state(json!({"round": 2, "name": step1["name"]}))
            .into()),
        (2, _, Some(step2)) => Ok(format!(
            "{} likes {}.",
            input
                .state()
                .map(|state| state["name"].clone())
                .unwrap_or_default(),
            step2["color"]
        )),
        _ => Err(InputRequired::new()
            .ask("step1", name_form("Step 1: What is your name?", "name"))
            .state(json!({"round": 1}))
            .into()),
    }
}

/// Keeps state the client must not change.
#[tool(permission = "public", read_only)]
fn test_input_required_result_tampered_state(#[ctx] input: Input) -> Result<String, ToolError> {
    match (input.response("confirm"), input.state()) {
        (Some(_), Some(state)) => Ok(format!("state-ok: {state}")),
        _ => {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            Err(InputRequired::new()
                .ask("confirm", InputRequest::form("Please confirm", schema))
                .state(json!({"user": "conformance", "may_delete": false}))
                .into())
        }
    }
}

/// Asks only what the client said it can answer.
#[tool(permission = "public", read_only)]
fn test_input_required_result_capabilities(#[ctx] input: Input) -> Result<String, ToolError> {
    let answered = ["user_name", "greeting", "client_roots"]
        .iter()
        .any(|key| input.response(key).is_some());
    if answered {
        return Ok("Answered what the client could answer.".into());
    }
    let mut asked = InputRequired::new();
    if input.can(InputKind::Elicitation) {
        asked = asked.ask("user_name", name_form("What is your name?", "name"));
    }
    if input.can(InputKind::Sampling) {
        asked = asked.ask("greeting", InputRequest::sample("Generate a greeting", 50));
    }
    if input.can(InputKind::Roots) {
        asked = asked.ask("client_roots", InputRequest::roots());
    }
    if asked.requests.is_empty() {
        return Ok("The client can be asked nothing.".into());
    }
    Err(asked.into())
}

/// Logs a message: it reaches only a client that asked for a log level.
#[tool(permission = "public", read_only)]
fn test_logging_tool(#[ctx] context: ToolContext) -> &'static str {
    context.log(LogLevel::Info, "a message for clients that asked for one");
    "Logged."
}

/// Asks the person a question: over 2026-07-28 it goes back in the result, never as a
/// request of its own on the response stream.
#[tool(permission = "public", read_only)]
fn test_streaming_elicitation(#[ctx] input: Input) -> Result<String, ToolError> {
    match input.accepted("answer") {
        Some(form) => Ok(format!("Answered: {}", Value::Object(form.clone()))),
        None => Err(InputRequired::new()
            .ask("answer", name_form("What should I stream?", "text"))
            .into()),
    }
}

/// The served registry, for the tool that changes it.
static SERVED: OnceLock<Registry> = OnceLock::new();

/// Adds a tool, or takes it away again: clients listening hear that the list changed.
#[tool(permission = "public")]
fn test_trigger_tool_change() -> Result<String, ToolError> {
    let registry = SERVED
        .get()
        .ok_or_else(|| ToolError::execution("not serving yet"))?;
    if registry.unregister("test_added_tool") {
        return Ok("Removed `test_added_tool`.".into());
    }
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let definition = ToolDefinition::new("test_added_tool", "Added at run time.", "public", schema);
    let added = FnTool::new(definition, |_context, _arguments| async {
        Ok(json!("added"))
    });
    registry
        .register(added)
        .map_err(|error| ToolError::execution(error.to_string()))?;
    Ok("Added `test_added_tool`.".into())
}

/// Needs the client's model, whether or not the client said it has one.
#[tool(permission = "public", read_only)]
fn test_missing_capability(#[ctx] input: Input) -> Result<String, ToolError> {
    match input.sampled_text("answer") {
        Some(text) => Ok(text.to_owned()),
        None => Err(InputRequired::new()
            .ask("answer", InputRequest::sample("Say hello", 20))
            .into()),
    }
}

/// A tool whose input schema uses JSON Schema 2020-12's vocabulary, written by hand.
fn json_schema_2020_12_tool() -> FnTool {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    let definition = ToolDefinition::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        "public",
        schema,
    );
    FnTool::new(definition, |_context, arguments| async move {
        Ok(json!(format!("Received: {arguments}")))
    })
}

fn everyone(_parts: &Parts) -> Result<Caller, AuthError> {
    Ok(Caller::new("conformance", "public"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(toolgate::logging::keeping_secrets("warn"))
        .init();
    let address: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into())
        .parse()?;
    let registry = Registry::builder()
        .roles(["public"])
        .filter_linked(|tool| {
            tool.source
                .as_ref()
                .is_some_and(|source| source.file.ends_with("conformance.rs"))
        })
        .tool(json_schema_2020_12_tool())
        .build()?;
    let _ = SERVED.set(registry.clone());
    let options = McpHttpOptions {
        identity: ServerIdentity::new("toolgate-conformance", env!("CARGO_PKG_VERSION")),
        ..McpHttpOptions::default()
    };
    let app = axum::Router::new().nest_service(
        "/mcp",
        toolgate::mcp::http_service_with(registry, everyone, options),
    );
    let listener = tokio::net::TcpListener::bind(address).await?;
    eprintln!(
        "MCP conformance fixtures on http://{}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, app).await?;
    Ok(())
}
