//! What a new user meets first: readable build errors even through `Debug`, and a registry
//! that says when tools it was told to expect are missing.

use serde_json::json;
use toolgate::prelude::*;

/// Read the weather.
#[tool(permission = "public", group = "weather", read_only)]
fn forecast() -> &'static str {
    "sunny"
}

/// Needs a role nobody configured.
#[tool(permission = "wizard", read_only)]
fn spell() -> &'static str {
    "poof"
}

#[test]
fn a_build_error_prints_its_problems_through_debug_too() {
    let error = Registry::builder().roles(["public"]).build().unwrap_err();
    let debug = format!("{error:?}");
    assert_eq!(debug, error.to_string());
    assert!(debug.contains("tool `spell`"), "{debug}");
    assert!(debug.contains("\"wizard\""), "{debug}");
    assert!(
        !debug.contains("UnknownPermission"),
        "no struct dump: {debug}"
    );
}

#[test]
fn expected_tools_and_groups_that_are_missing_fail_the_build_by_name() {
    let only_forecast = || {
        Registry::builder()
            .roles(["public"])
            .filter_linked(|tool| tool.name == "forecast")
    };
    let error = only_forecast()
        .expect_tools(["forecast", "read_file", "search"])
        .expect_groups(["weather", "files"])
        .build()
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("`read_file`, `search`"), "{message}");
    assert!(message.contains("`files`"), "{message}");
    assert!(
        !message.contains("`forecast`") && !message.contains("`weather`"),
        "{message}"
    );
    assert!(message.contains("use that_crate as _;"), "{message}");
    let registry = only_forecast()
        .expect_tools(["forecast"])
        .expect_groups(["weather"])
        .build()
        .unwrap();
    assert_eq!(registry.len(), 1);
}

#[test]
fn an_export_goes_straight_into_json() {
    let registry = Registry::builder()
        .roles(["public"])
        .filter_linked(|tool| tool.name == "forecast")
        .build()
        .unwrap();
    let caller = Caller::new("u", "public");
    let request = json!({
        "model": "m",
        "tools": registry.export(&caller, toolgate::formats::Format::OpenAiChat { strict: true }),
    });
    assert_eq!(request["tools"][0]["function"]["name"], "forecast");
}

#[tokio::test]
async fn a_setting_for_the_other_kind_of_mcp_server_is_an_error_not_a_silence() {
    use toolgate::mcp::McpImport;
    let error = McpImport::http("lab", "http://127.0.0.1:9/mcp")
        .permission("public")
        .env("TOKEN", "x")
        .connect()
        .await
        .err()
        .expect("refused");
    assert!(error.message.contains("`.env(..)`"), "{error}");
    let error = McpImport::command("lab", "true", [] as [&str; 0])
        .permission("public")
        .bearer_token("x")
        .connect()
        .await
        .err()
        .expect("refused");
    assert!(error.message.contains("`.bearer_token(..)`"), "{error}");
}
