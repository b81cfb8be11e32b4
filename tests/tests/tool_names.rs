//! Tool names in MCP's format (SEP-986: `.` and `/` allowed): published as they are over
//! MCP, as provider-safe names to OpenAI, Anthropic and Gemini, and found by either.

use serde_json::json;
use toolgate::formats::Format;
use toolgate::prelude::*;
use toolgate::{BuildProblem, FnTool, ToolDefinition};

fn echo(name: &str, permission: &str) -> FnTool {
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let definition = ToolDefinition::new(name, "Says its name.", permission, schema);
    let name = name.to_owned();
    FnTool::new(definition, move |_, _| {
        let name = name.clone();
        async move { Ok(json!(name)) }
    })
}

fn registry() -> Registry {
    Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .tool(echo("files/read.text", "public"))
        .tool(echo("admin.tools.list", "staff"))
        .build()
        .unwrap()
}

fn names(tools: &serde_json::Value, pointer: &str) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool.pointer(pointer).unwrap().as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn names_with_dots_and_slashes_are_published_and_found_by_either_form() {
    let registry = registry();
    let staff = Caller::new("s", "staff");
    let mcp = registry.export(&staff, Format::Mcp);
    assert_eq!(
        names(&mcp, "/name"),
        ["admin.tools.list", "files/read.text"]
    );
    let openai = registry.export(&staff, Format::OpenAiChat { strict: true });
    assert_eq!(
        names(&openai, "/function/name"),
        ["admin_tools_list", "files_read_text"]
    );
    let anthropic = registry.export(&staff, Format::Anthropic { strict: false });
    assert_eq!(
        names(&anthropic, "/name"),
        ["admin_tools_list", "files_read_text"]
    );

    for name in ["files/read.text", "files_read_text"] {
        let outcome = registry.call(&staff, ToolCall::new("1", name, "{}")).await;
        assert_eq!(outcome.result.unwrap(), "files/read.text", "{name}");
    }
    // Hidden under either name exactly like an unknown tool.
    let public = Caller::new("p", "public");
    let mut errors = Vec::new();
    for name in ["admin.tools.list", "admin_tools_list", "admin_tools_lisp"] {
        let outcome = registry.call(&public, ToolCall::new("1", name, "{}")).await;
        let error = outcome.error().unwrap().clone();
        assert_eq!(error.code, ErrorCode::UnknownTool, "{name}");
        errors.push(error.message.replace(name, "NAME"));
    }
    assert!(
        errors.windows(2).all(|pair| pair[0] == pair[1]),
        "{errors:#?}"
    );
}

#[test]
fn names_that_would_clash_at_providers_are_refused() {
    let error = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(echo("files/read", "public"))
        .tool(echo("files_read", "public"))
        .build()
        .unwrap_err();
    let clash = error.problems().iter().find_map(|problem| match problem {
        BuildProblem::ProviderNameClash {
            provider_name,
            tools,
        } => Some((provider_name.clone(), tools.clone())),
        _ => None,
    });
    assert_eq!(
        clash,
        Some((
            "files_read".to_owned(),
            vec!["files/read".to_owned(), "files_read".to_owned()]
        ))
    );
    assert!(
        error.to_string().contains("cannot hold `.` or `/`"),
        "{error}"
    );
    let invalid = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(echo("files read", "public"))
        .build()
        .unwrap_err();
    assert!(invalid.to_string().contains("`.` or `/`"), "{invalid}");
}
