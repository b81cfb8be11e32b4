//! The schema is the contract: every argument is checked against the exported schema before
//! the function runs, and bad input of every kind gets a specific error.

use std::sync::Mutex;

use serde::Deserialize;
use serde_json::{Value, json};
use toolgate::prelude::*;
use toolgate::{ArgumentLimits, ToolArguments};

/// Pets booked by calls that reached the function (tests run in parallel: each checks its own).
static BOOKED: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Species {
    Cat,
    Dog,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Pet {
    #[schemars(length(min = 1, max = 20))]
    name: String,
    species: Species,
}

/// Book a visit.
#[tool(permission = "public")]
fn book(
    pet: Pet,
    /// Visit length in minutes.
    #[schemars(range(min = 15, max = 120))]
    minutes: u32,
    #[schemars(regex(pattern = r"^[A-Z]{2}-\d{4}$"))] reference: Option<String>,
    #[schemars(length(max = 5))] notes: Option<Vec<String>>,
) -> String {
    BOOKED.lock().unwrap().push(pet.name.clone());
    let _ = (reference, notes);
    let _species = matches!(pet.species, Species::Cat | Species::Dog);
    format!("{} for {minutes}", pet.name)
}

/// Echo a long text.
#[tool(permission = "public")]
fn echo(text: String) -> usize {
    text.len()
}

/// Accept anything nested.
#[tool(permission = "public")]
fn nested(value: Value) -> bool {
    value.is_object()
}

fn registry() -> Registry {
    Registry::builder().roles(["public"]).build().unwrap()
}

async fn call(registry: &Registry, name: &str, arguments: impl Into<ToolArguments>) -> ToolOutcome {
    registry
        .call(
            &Caller::new("t", "public"),
            ToolCall::new("id", name, arguments),
        )
        .await
}

fn violations(outcome: &ToolOutcome) -> Vec<(String, String)> {
    let error = outcome.error().expect("the call should fail");
    assert_eq!(error.code, ErrorCode::InvalidArguments, "{error}");
    error.details.as_ref().unwrap()["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["path"].as_str().unwrap().to_owned(),
                v["keyword"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn valid_arguments_run_from_text_value_and_bytes() {
    let registry = registry();
    let good = json!({"pet": {"name": "Rex", "species": "dog"}, "minutes": 30});
    for arguments in [
        ToolArguments::Value(good.clone()),
        ToolArguments::Text(good.to_string()),
        ToolArguments::Bytes(good.to_string().into_bytes()),
    ] {
        assert_eq!(
            call(&registry, "book", arguments).await.result.unwrap(),
            "Rex for 30"
        );
    }
}

#[tokio::test]
async fn every_violation_is_reported_at_once_with_its_path() {
    let registry = registry();
    let outcome = call(
        &registry,
        "book",
        json!({
            "pet": {"name": "", "species": "hamster"},
            "minutes": 500,
            "reference": "nope",
            "notes": ["a", "b", "c", "d", "e", "f"],
            "surprise": true
        }),
    )
    .await;
    let mut found = violations(&outcome);
    found.sort();
    assert_eq!(
        found,
        [
            ("".into(), "additionalProperties".into()),
            ("/minutes".into(), "maximum".into()),
            ("/notes".into(), "maxItems".into()),
            ("/pet/name".into(), "minLength".into()),
            ("/pet/species".into(), "enum".into()),
            ("/reference".into(), "pattern".into()),
        ]
    );
    let message = &outcome.error().unwrap().message;
    assert!(
        message.contains(
            "at `/pet/species`: \"hamster\" is not one of the allowed values: \"cat\", \"dog\""
        ),
        "{message}"
    );
    assert!(
        message.contains("at `/minutes`: 500 is greater than the maximum of 120"),
        "{message}"
    );
    assert!(message.contains("'surprise' was unexpected"), "{message}");
    assert!(
        !BOOKED.lock().unwrap().contains(&String::new()),
        "no invalid call may reach the function"
    );
}

#[tokio::test]
async fn wrong_types_and_missing_fields() {
    let registry = registry();
    let outcome = call(
        &registry,
        "book",
        json!({"pet": {"name": 5, "species": "cat"}, "minutes": "thirty"}),
    )
    .await;
    let mut found = violations(&outcome);
    found.sort();
    assert_eq!(
        found,
        [
            ("/minutes".into(), "type".into()),
            ("/pet/name".into(), "type".into())
        ]
    );
    let outcome = call(&registry, "book", json!({"minutes": 30})).await;
    assert_eq!(violations(&outcome), [("".into(), "required".into())]);
    assert!(
        outcome
            .error()
            .unwrap()
            .message
            .contains("\"pet\" is a required property")
    );
    let outcome = call(
        &registry,
        "book",
        json!({"pet": {"name": "Rex", "species": "dog"}, "minutes": 30.5}),
    )
    .await;
    assert_eq!(violations(&outcome), [("/minutes".into(), "type".into())]);
}

#[tokio::test]
async fn malformed_json_reports_its_position() {
    let registry = registry();
    let outcome = call(&registry, "echo", "{\"text\": \"abc\",\n  oops}").await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::InvalidArguments);
    assert!(
        error.message.starts_with(
            "the arguments are not valid JSON: key must be a string at line 2 column 3"
        ),
        "{}",
        error.message
    );
    assert_eq!(error.details, Some(json!({"line": 2, "column": 3})));
}

#[tokio::test]
async fn invalid_utf8_and_escapes_are_errors_not_panics() {
    let registry = registry();
    let outcome = call(
        &registry,
        "echo",
        ToolArguments::Bytes(b"{\"text\": \"\xff\xfe\"}".to_vec()),
    )
    .await;
    assert!(
        outcome
            .error()
            .unwrap()
            .message
            .contains("invalid unicode code point"),
        "{:?}",
        outcome.error()
    );
    let outcome = call(&registry, "echo", r#"{"text": "\ud800"}"#).await;
    assert!(
        outcome.error().unwrap().message.contains("hex escape"),
        "{:?}",
        outcome.error()
    );
    let outcome = call(&registry, "echo", r#"{"text": "\q"}"#).await;
    assert!(
        outcome.error().unwrap().message.contains("invalid escape"),
        "{:?}",
        outcome.error()
    );
}

#[tokio::test]
async fn non_object_arguments_are_refused_and_empty_means_none() {
    let registry = registry();
    for (arguments, shown) in [
        (json!([1, 2]), "an array"),
        (json!("text"), "the string \"text\""),
        (json!(7), "the number 7"),
        (json!(true), "the boolean true"),
    ] {
        let outcome = call(&registry, "echo", arguments).await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::InvalidArguments);
        assert!(
            error.message.ends_with(&format!("but got {shown}")),
            "{}",
            error.message
        );
    }
    // No arguments at all (OpenAI sends "" for parameterless tools) is an empty object.
    for arguments in [
        ToolArguments::Text(String::new()),
        ToolArguments::Value(Value::Null),
    ] {
        let outcome = call(&registry, "echo", arguments).await;
        assert_eq!(violations(&outcome), [("".into(), "required".into())]);
    }
}

#[tokio::test]
async fn ten_megabyte_strings_are_refused_by_the_size_limit() {
    let registry = registry();
    let huge = "x".repeat(10 * 1024 * 1024);
    let as_text = json!({"text": huge}).to_string();
    let outcome = call(&registry, "echo", as_text).await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::ArgumentsTooLarge);
    let outcome = call(&registry, "echo", json!({"text": huge})).await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::ArgumentsTooLarge);
    assert_eq!(error.details.as_ref().unwrap()["limit"], 1024 * 1024);
}

#[tokio::test]
async fn ten_megabyte_strings_pass_when_the_application_allows_them() {
    let registry = Registry::builder()
        .roles(["public"])
        .argument_limits(ArgumentLimits {
            max_bytes: 32 * 1024 * 1024,
            max_depth: 64,
        })
        .build()
        .unwrap();
    let huge = "x".repeat(10 * 1024 * 1024);
    let outcome = call(&registry, "echo", json!({"text": huge}).to_string()).await;
    assert_eq!(outcome.result.unwrap(), 10 * 1024 * 1024);
    // A long value that breaks a constraint is named, not quoted back in full.
    let outcome = call(
        &registry,
        "book",
        json!({"pet": {"name": huge, "species": "cat"}, "minutes": 30}),
    )
    .await;
    let error = outcome.error().unwrap();
    assert!(
        error.message.len() < 1000,
        "message of {} bytes",
        error.message.len()
    );
}

fn deeply_nested_text(depth: usize) -> String {
    format!("{{\"value\": {}{}}}", "[".repeat(depth), "]".repeat(depth))
}

fn deeply_nested_value(depth: usize) -> Value {
    let mut value = json!([]);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    // Not `json!`, which would serialize the value recursively.
    let mut root = serde_json::Map::new();
    root.insert("value".to_owned(), value);
    Value::Object(root)
}

#[tokio::test]
async fn ten_thousand_levels_of_nesting_are_refused_without_overflowing_the_stack() {
    let registry = registry();
    let outcome = call(&registry, "nested", deeply_nested_text(10_000)).await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::ArgumentsTooDeep);
    // As a parsed value: built without recursion, checked and dropped without recursion.
    let outcome = call(&registry, "nested", deeply_nested_value(10_000)).await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::ArgumentsTooDeep);
    assert!(
        error.message.contains("more than 64 levels"),
        "{}",
        error.message
    );
    // Within the limit, nesting is fine.
    let outcome = call(&registry, "nested", deeply_nested_text(50)).await;
    assert!(outcome.is_ok(), "{:?}", outcome.error());
}

#[tokio::test]
async fn brackets_inside_strings_do_not_count_as_nesting() {
    let registry = registry();
    let text = "[".repeat(1000);
    let outcome = call(&registry, "echo", json!({"text": text}).to_string()).await;
    assert_eq!(outcome.result.unwrap(), 1000);
}
