//! Tools registered at run time (the `Tool` trait, closures) get the same treatment as
//! `#[tool]` functions: role filtering, validation against their schema, panic isolation.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolgate::prelude::*;
use toolgate::{FnTool, Tool, ToolDefinition, ToolFuture};

struct Multiply {
    calls: Arc<AtomicUsize>,
}

impl Tool for Multiply {
    fn definition(&self) -> ToolDefinition {
        let mut definition = ToolDefinition::new(
            "multiply",
            "Multiply two integers.",
            "staff",
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "maximum": 1000}},
                "required": ["a", "b"],
                "additionalProperties": false
            }),
        );
        definition.hints.read_only = true;
        definition
    }

    fn call(&self, context: ToolContext, arguments: Value) -> ToolFuture {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let caller = context.caller().id().to_owned();
        Box::pin(async move {
            let product = arguments["a"].as_i64().unwrap() * arguments["b"].as_i64().unwrap();
            Ok(json!({"product": product, "for": caller}))
        })
    }
}

fn echo_tool(name: &str) -> FnTool {
    let definition = ToolDefinition::new(
        name,
        "Echo the text.",
        "public",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    FnTool::new(definition, |_, arguments| async move {
        Ok(arguments["text"].clone())
    })
}

fn registry(calls: Arc<AtomicUsize>) -> Registry {
    Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .tool(Multiply { calls })
        .tool(echo_tool("echo"))
        .build()
        .unwrap()
}

#[tokio::test]
async fn run_time_tools_are_role_filtered_and_validated() {
    let calls = Arc::new(AtomicUsize::new(0));
    let registry = registry(Arc::clone(&calls));
    let public = Caller::new("p", "public");
    let staff = Caller::new("s", "staff");
    assert_eq!(registry.visible_to(&public).len(), 1);
    assert_eq!(registry.visible_to(&staff).len(), 2);

    let hidden = registry
        .call(
            &public,
            ToolCall::new("1", "multiply", json!({"a": 2, "b": 3})),
        )
        .await;
    assert_eq!(hidden.error().unwrap().code, ErrorCode::UnknownTool);

    let invalid = registry
        .call(
            &staff,
            ToolCall::new("2", "multiply", json!({"a": 2, "b": 5000})),
        )
        .await;
    assert_eq!(invalid.error().unwrap().code, ErrorCode::InvalidArguments);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "invalid arguments never reach the tool"
    );

    let good = registry
        .call(
            &staff,
            ToolCall::new("3", "multiply", r#"{"a": 6, "b": 7}"#),
        )
        .await;
    assert_eq!(good.result.unwrap(), json!({"product": 42, "for": "s"}));
}

#[tokio::test]
async fn tools_can_be_added_and_removed_while_running_and_subscribers_are_told() {
    let registry = registry(Arc::new(AtomicUsize::new(0)));
    let public = Caller::new("p", "public");
    let mut changes = registry.changes();
    let before = registry.visible_to(&public);

    registry.register(echo_tool("shout")).unwrap();
    assert!(changes.has_changed().unwrap());
    assert_eq!(*changes.borrow_and_update(), 1);
    let names: Vec<_> = registry
        .visible_to(&public)
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names, ["echo", "shout"]);
    assert_eq!(before.len(), 1, "listings taken earlier are unaffected");

    let outcome = registry
        .call(&public, ToolCall::new("1", "shout", json!({"text": "hi"})))
        .await;
    assert_eq!(outcome.result.unwrap(), "hi");

    assert!(registry.unregister("shout"));
    assert!(!registry.unregister("shout"));
    assert_eq!(*changes.borrow_and_update(), 2);
    let gone = registry
        .call(&public, ToolCall::new("2", "shout", json!({"text": "hi"})))
        .await;
    assert_eq!(gone.error().unwrap().code, ErrorCode::UnknownTool);
}

#[test]
fn a_conflicting_run_time_tool_is_refused_and_changes_nothing() {
    let registry = registry(Arc::new(AtomicUsize::new(0)));
    let changes = registry.changes();
    let error = registry.register(echo_tool("echo")).unwrap_err();
    assert!(
        error.to_string().contains("two tools are named `echo`"),
        "{error}"
    );
    let bad = ToolDefinition::new("bad", "Bad.", "nobody", json!({"type": "object"}));
    let error = registry
        .register(FnTool::new(bad, |_, _| async { Ok(Value::Null) }))
        .unwrap_err();
    assert!(
        error.to_string().contains("requires permission \"nobody\""),
        "{error}"
    );
    assert_eq!(registry.len(), 2);
    assert!(!changes.has_changed().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_run_time_tool_is_contained() {
    let definition = ToolDefinition::new("boom", "Explode.", "public", json!({"type": "object"}));
    let registry = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(FnTool::new(definition, |_, _| async {
            panic!("run-time boom")
        }))
        .build()
        .unwrap();
    let outcome = registry
        .call(
            &Caller::new("p", "public"),
            ToolCall::new("1", "boom", json!({})),
        )
        .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::Panicked);
}

#[test]
fn an_invalid_schema_is_refused_at_build() {
    let definition = ToolDefinition::new(
        "broken",
        "Broken.",
        "public",
        json!({"type": "object", "properties": {"a": {"type": "no-such-type"}}}),
    );
    let error = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(FnTool::new(definition, |_, _| async { Ok(Value::Null) }))
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("tool `broken` has an invalid input schema"),
        "{error}"
    );
}
