//! Results that are content (images, audio, resources, text): checked by the registry,
//! carried by outcomes, and written in each provider's nearest form.

use serde_json::{Value, json};
use toolgate::content::Content;
use toolgate::formats::{anthropic, gemini, mcp, openai};
use toolgate::prelude::*;
use toolgate::{FnTool, ToolDefinition};

/// A PNG's first bytes: enough for the formats, which never decode it.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

/// The clinic's logo, a PDF leaflet, a jingle and a link.
#[tool(permission = "public", read_only)]
fn brochure() -> Vec<Content> {
    vec![
        Content::text("Our brochure:"),
        Content::image(PNG, "image/png"),
        Content::resource_bytes("file:///leaflet.pdf", "application/pdf", b"%PDF-1.7"),
        Content::audio(b"RIFF", "audio/wav"),
        Content::resource_text("test://hours", "text/plain", "Mon-Fri 8-18"),
        Content::link("https://clinic.example/map", "map"),
    ]
}

/// One image.
#[tool(permission = "public", read_only)]
fn logo() -> Content {
    Content::image(PNG, "image/png")
}

/// Staff only.
#[tool(permission = "staff", read_only)]
fn staff_badge() -> Content {
    Content::image(PNG, "image/png")
}

fn registry() -> Registry {
    let garbage = |name: &str, value: Value| {
        let mut definition = ToolDefinition::new(
            name,
            "Claims content, returns something else.",
            "public",
            json!({"type": "object", "properties": {}}),
        );
        definition.returns_content = true;
        FnTool::new(definition, move |_, _| {
            let value = value.clone();
            async move { Ok(value) }
        })
    };
    Registry::builder()
        .roles(["public", "staff"])
        .filter_linked(|tool| ["brochure", "logo", "staff_badge"].contains(&tool.name.as_str()))
        .tool(garbage("not_content", json!({"temperature": 21})))
        .tool(garbage(
            "bad_base64",
            json!([{"type": "image", "data": "not base64!", "mimeType": "image/png"}]),
        ))
        .build()
        .unwrap()
}

async fn call(registry: &Registry, role: &str, name: &str) -> ToolOutcome {
    let caller = Caller::new("u", role);
    registry
        .call(&caller, ToolCall::new("call_1", name, "{}"))
        .await
}

#[tokio::test]
async fn content_tools_are_marked_and_their_blocks_checked() {
    let registry = registry();
    let caller = Caller::new("u", "public");
    let definition = registry.definition(&caller, "brochure").unwrap();
    assert!(definition.returns_content);
    assert!(
        definition.output_schema.is_none(),
        "content has no output schema"
    );
    assert!(
        registry
            .definition(&caller, "not_content")
            .unwrap()
            .output_schema
            .is_none()
    );

    let outcome = call(&registry, "public", "brochure").await;
    assert!(outcome.is_content, "{outcome:?}");
    let blocks = outcome.content().unwrap();
    assert_eq!(blocks.len(), 6);
    assert_eq!(blocks[0], Content::text("Our brochure:"));
    // A single block is a list of one.
    let single = call(&registry, "public", "logo").await;
    assert_eq!(single.result.as_ref().unwrap().as_array().unwrap().len(), 1);

    for name in ["not_content", "bad_base64"] {
        let outcome = call(&registry, "public", name).await;
        let error = outcome.error().expect("refused");
        assert_eq!(error.code, ErrorCode::ExecutionFailed, "{name}");
        assert!(!outcome.is_content);
    }
    // A hidden content tool answers exactly like an unknown one.
    let hidden = call(&registry, "public", "staff_badge").await;
    let unknown = call(&registry, "public", "no_such_badge").await;
    assert!(!hidden.is_content);
    assert_eq!(hidden.error().unwrap().code, unknown.error().unwrap().code);
    assert_eq!(
        serde_json::to_value(&hidden)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        serde_json::to_value(&unknown)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn each_provider_gets_its_nearest_form() {
    let registry = registry();
    let outcome = call(&registry, "public", "brochure").await;
    let definition = registry
        .definition(&Caller::new("u", "public"), "brochure")
        .unwrap();
    let png = json!("iVBORw0KGgo=");

    // MCP: the blocks as they are, no structured content.
    let result = mcp::call_tool_result(&outcome, Some(&definition));
    assert_eq!(result["isError"], false);
    assert!(result.get("structuredContent").is_none());
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "data": png, "mimeType": "image/png"})
    );
    assert_eq!(result["content"][5]["type"], "resource_link");

    // Anthropic: text, image and PDF document blocks; the rest described.
    let message = anthropic::tool_result_message(std::slice::from_ref(&outcome));
    let blocks = message["content"][0]["content"].as_array().unwrap();
    assert_eq!(
        blocks[1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": png})
    );
    assert_eq!(blocks[2]["type"], "document");
    assert_eq!(
        blocks[3],
        json!({"type": "text", "text": "[audio audio/wav, 4 bytes]"})
    );
    assert_eq!(blocks[4]["text"], "[resource test://hours]\nMon-Fri 8-18");

    // OpenAI Responses: input parts; Chat Completions (text only): a description.
    let outputs = openai::function_call_outputs(std::slice::from_ref(&outcome));
    let parts = outputs[0]["output"].as_array().unwrap();
    assert_eq!(parts[1]["type"], "input_image");
    assert_eq!(
        parts[1]["image_url"],
        format!("data:image/png;base64,{}", png.as_str().unwrap())
    );
    assert_eq!(parts[2]["type"], "input_file");
    assert_eq!(parts[2]["filename"], "leaflet.pdf");
    let chat = openai::tool_messages(std::slice::from_ref(&outcome));
    let text = chat[0]["content"].as_str().unwrap();
    assert!(
        text.starts_with("Our brochure:\n[image image/png, 8 bytes]"),
        "{text}"
    );
    assert!(
        text.contains("[resource link map: https://clinic.example/map]"),
        "{text}"
    );

    // Gemini: the text in the response, the media as inline data.
    let content = gemini::function_response_content(std::slice::from_ref(&outcome));
    let response = &content["parts"][0]["functionResponse"];
    assert!(
        response["response"]["output"]
            .as_str()
            .unwrap()
            .starts_with("Our brochure:")
    );
    let media = response["parts"].as_array().unwrap();
    let types: Vec<&str> = media
        .iter()
        .map(|part| part["inlineData"]["mimeType"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["image/png", "application/pdf", "audio/wav"]);
}

#[test]
fn gemini_inlines_only_the_media_types_it_takes_whatever_a_tool_claims() {
    let claimed = [
        "image/svg+xml",
        "image/png; charset=x",
        "image/png\r\nX-Injected: 1",
        "audio/x-made-up",
        "text/html",
        "IMAGE/PNG",
    ];
    let mut blocks: Vec<Content> = claimed
        .iter()
        .map(|mime_type| Content::image(PNG, *mime_type))
        .collect();
    blocks.push(Content::resource_bytes(
        "file:///page.svg",
        "image/svg+xml",
        b"<svg/>",
    ));
    blocks.push(Content::image(PNG, "image/png"));
    blocks.push(Content::audio(b"ID3", "audio/mpeg"));
    let outcome = ToolOutcome {
        call_id: "c".into(),
        tool: "media".into(),
        result: Ok(serde_json::to_value(&blocks).unwrap()),
        duration: std::time::Duration::ZERO,
        ui: None,
        is_content: true,
    };
    let content = gemini::function_response_content(std::slice::from_ref(&outcome));
    let response = &content["parts"][0]["functionResponse"];
    let inlined: Vec<&str> = response["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| part["inlineData"]["mimeType"].as_str().unwrap())
        .collect();
    assert_eq!(inlined, ["image/png", "audio/mpeg"]);
    // What was left out is said in the text, never sent as media.
    let text = response["response"]["output"].as_str().unwrap();
    assert!(text.contains("image/svg+xml"), "{text}");
}
