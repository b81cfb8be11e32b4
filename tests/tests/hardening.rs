//! What the outside attack suite found, as tests: approval authority in the library, panics
//! while a tool is stopped, writers of one audit file extending one chain, byte-exact hashes, bounded error
//! messages, and one rule for numbers in the schema and the function.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::approval::TicketError;
use toolgate::audit::{JsonlFileSink, LogProblem, verify_log};
use toolgate::prelude::*;

/// Restart a machine.
#[tool(permission = "staff", destructive)]
fn restart(machine: String) -> String {
    format!("restarted {machine}")
}

/// Drop every table.
#[tool(permission = "admin", destructive)]
fn drop_tables(database: String) -> String {
    format!("dropped {database}")
}

/// A future that panics when it is dropped before it finishes.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("dropped while running");
        }
    }
}

/// Hang, and panic when stopped.
#[tool(permission = "staff", read_only, timeout = "50ms")]
async fn hang_and_panic_when_stopped() -> u8 {
    let _guard = PanicsOnDrop;
    std::future::pending::<()>().await;
    0
}

/// Echo a small number.
#[tool(permission = "staff", read_only)]
fn small(
    /// A byte.
    n: u8,
    /// A list of bytes.
    #[serde(default)]
    more: Vec<u8>,
) -> Value {
    json!({"n": n, "more": more})
}

fn registry() -> Registry {
    Registry::builder()
        .roles(["public", "staff", "admin"])
        .approver_role("staff")
        .build()
        .unwrap()
}

fn ticket(outcome: &ToolOutcome) -> String {
    outcome.error().unwrap().details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn an_approver_decides_only_what_its_role_may_see() {
    let registry = registry();
    let admin = Caller::new("root", "admin");
    let staff = Caller::new("dr-lee", "staff");
    let public = Caller::new("anonymous", "public");
    let admins_call = registry
        .call(
            &admin,
            ToolCall::new("1", "drop_tables", json!({"database": "prod"})),
        )
        .await;
    let staffs_call = registry
        .call(
            &staff,
            ToolCall::new("2", "restart", json!({"machine": "m1"})),
        )
        .await;
    let (admin_ticket, staff_ticket) = (ticket(&admins_call), ticket(&staffs_call));

    // Listing: each approver sees only what it may decide; a non-approver sees nothing.
    let tools_of = async |caller: &Caller| -> Vec<String> {
        let mut tools: Vec<String> = registry
            .pending_approvals(caller)
            .await
            .unwrap()
            .into_iter()
            .map(|call| call.tool)
            .collect();
        tools.sort();
        tools
    };
    assert_eq!(tools_of(&admin).await, ["drop_tables", "restart"]);
    assert_eq!(tools_of(&staff).await, ["restart"]);
    assert!(tools_of(&public).await.is_empty());
    assert!(tools_of(&Caller::new("x", "no-such-role")).await.is_empty());

    // A staff approver gets the same answer for the admin's call as for a used ticket, and
    // the call stays waiting for someone who may decide it.
    assert_eq!(
        registry.approve(&admin_ticket, &staff).await.unwrap_err(),
        TicketError::AlreadyUsed
    );
    assert_eq!(
        registry
            .deny(&admin_ticket, &staff, "no")
            .await
            .unwrap_err(),
        TicketError::AlreadyUsed
    );
    // Nobody below the approver role decides anything, not even a call of their own tools.
    assert_eq!(
        registry.approve(&staff_ticket, &public).await.unwrap_err(),
        TicketError::AlreadyUsed
    );
    assert_eq!(
        tools_of(&admin).await.len(),
        2,
        "refused attempts took nothing"
    );

    let outcome = registry.approve(&admin_ticket, &admin).await.unwrap();
    assert_eq!(outcome.result.unwrap(), "dropped prod");
    let outcome = registry.approve(&staff_ticket, &staff).await.unwrap();
    assert_eq!(outcome.result.unwrap(), "restarted m1");
    assert_eq!(
        registry.approve(&staff_ticket, &staff).await.unwrap_err(),
        TicketError::AlreadyUsed
    );
}

#[test]
fn an_unknown_approver_role_is_a_build_error() {
    let error = Registry::builder()
        .roles(["public", "staff"])
        .approver_role("boss")
        .build()
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("\"boss\""), "{message}");
    assert!(message.contains("\"public\", \"staff\""), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_panics_while_stopped_still_answers_and_the_registry_keeps_serving() {
    let registry = registry();
    let staff = Caller::new("dr-lee", "staff");
    let call = || ToolCall::new("h", "hang_and_panic_when_stopped", json!({}));

    let outcome = registry.call(&staff, call()).await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::Timeout);

    let cancel = CancellationToken::new();
    let cancelling = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        cancelling.cancel();
    });
    let outcome = registry.call_with_cancel(&staff, call(), cancel).await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::Cancelled);

    let outcomes = registry.run_batch(&staff, vec![call(), call()]).await;
    for outcome in &outcomes {
        assert_eq!(outcome.error().unwrap().code, ErrorCode::Timeout);
    }

    // A caller that stops waiting drops the call mid-run: the panic stays inside.
    let dropped =
        tokio::time::timeout(Duration::from_millis(10), registry.call(&staff, call())).await;
    assert!(dropped.is_err());

    let outcome = registry
        .call(&staff, ToolCall::new("s", "small", json!({"n": 3})))
        .await;
    assert_eq!(outcome.result.unwrap()["n"], 3, "still serving");
}

#[test]
fn writers_of_one_audit_file_extend_one_chain() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("audit.jsonl");
    // Two sinks opened separately (as two processes would) and one shared by two registries.
    let first = Arc::new(JsonlFileSink::open(&path).unwrap());
    let second = Arc::new(JsonlFileSink::open(&path).unwrap());
    let build = |sink: &Arc<JsonlFileSink>| {
        Registry::builder()
            .roles(["public", "staff", "admin"])
            .audit_sink(Arc::clone(sink))
            .build()
            .unwrap()
    };
    let registries = [build(&first), build(&first), build(&second)];
    let staff = Caller::new("dr-lee", "staff");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let calls = (0..300).map(|index| {
            let registry = registries[index % 3].clone();
            let staff = staff.clone();
            tokio::spawn(async move {
                let call = ToolCall::new(index.to_string(), "small", json!({"n": 1}));
                registry.call(&staff, call).await
            })
        });
        futures::future::join_all(calls).await;
    });
    let verified = verify_log(&path).unwrap();
    assert_eq!(verified.records.len(), 300);
    let ends = [first.last_hash(), second.last_hash()];
    assert!(
        ends.contains(&verified.last_hash),
        "one of them wrote the end"
    );
    drop(registries);
    // A sink opened later continues the same chain.
    let later = JsonlFileSink::open(&path).unwrap();
    assert_eq!(later.last_hash(), verified.last_hash);
}

#[test]
fn any_change_to_the_bytes_of_an_audit_line_is_detected() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("audit.jsonl");
    {
        let sink = JsonlFileSink::open(&path).unwrap();
        let registry = Registry::builder()
            .roles(["public", "staff", "admin"])
            .audit_sink(sink)
            .build()
            .unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            for index in 0..3 {
                registry
                    .call(
                        &Caller::new("dr-lee", "staff"),
                        ToolCall::new(index.to_string(), "small", json!({"n": 7})),
                    )
                    .await;
            }
        });
    }
    let original = std::fs::read_to_string(&path).unwrap();
    assert!(verify_log(&path).is_ok());
    let second_line = original.lines().nth(1).unwrap().to_owned();
    let edits = [
        // A repeated key: parses to the same value.
        second_line.replacen("{\"approver\"", "{\"tool\":\"small\",\"approver\"", 1),
        // An added space.
        second_line.replacen("\"caller\":", "\"caller\": ", 1),
        // A changed escape of the same character.
        second_line.replacen("\"dr-lee\"", "\"dr\\u002dlee\"", 1),
    ];
    for edited in edits {
        assert_ne!(edited, second_line, "the edit applies");
        std::fs::write(&path, original.replacen(&second_line, &edited, 1)).unwrap();
        assert_eq!(
            verify_log(&path),
            Err(LogProblem::Altered { line: 2 }),
            "{edited}"
        );
    }
}

#[tokio::test]
async fn error_messages_are_bounded_whatever_the_input() {
    let registry = registry();
    let staff = Caller::new("dr-lee", "staff");
    let huge = "k".repeat(900 * 1024);
    let mut many = serde_json::Map::new();
    many.insert("value".into(), json!(1));
    for index in 0..50_000 {
        many.insert(format!("unexpected_{index}"), json!(index));
    }
    let cases = [
        ToolCall::new("name", huge.clone(), json!({})),
        ToolCall::new("key", "small", json!({"n": 1, huge.clone(): 1})),
        ToolCall::new("value", "small", json!({"n": huge.clone()})),
        ToolCall::new("keys", "small", Value::Object(many)),
        ToolCall::new(
            "items",
            "small",
            json!({"n": 1, "more": vec![huge.as_str(); 3]}),
        ),
    ];
    for call in cases {
        let id = call.id.clone();
        let outcome = registry.call(&staff, call).await;
        let text = serde_json::to_string(&outcome).unwrap();
        assert!(outcome.error().is_some(), "{id}");
        assert!(text.len() < 16 * 1024, "{id}: {} bytes", text.len());
    }
}

#[tokio::test]
async fn integral_numbers_are_integers_for_the_schema_and_the_function_alike() {
    let registry = registry();
    let staff = Caller::new("dr-lee", "staff");
    let run =
        |arguments: &str| registry.call(&staff, ToolCall::new("n", "small", arguments.to_owned()));
    for (arguments, n) in [
        (r#"{"n": 1.0}"#, 1),
        (r#"{"n": -0}"#, 0),
        (r#"{"n": -0.0}"#, 0),
        (r#"{"n": 1E1}"#, 10),
        (r#"{"n": 2.55e2}"#, 255),
    ] {
        let outcome = run(arguments).await;
        assert_eq!(
            outcome.result.as_ref().unwrap()["n"],
            n,
            "{arguments}: {outcome:?}"
        );
    }
    let nested = run(r#"{"n": 1, "more": [2.0, 3e0]}"#).await;
    assert_eq!(nested.result.unwrap()["more"], json!([2, 3]));
    // Refused by the schema, as the function would refuse them: never by serde alone.
    for arguments in [
        r#"{"n": 1.5}"#,
        r#"{"n": 256.0}"#,
        r#"{"n": -1.0}"#,
        r#"{"n": 1e300}"#,
    ] {
        let outcome = run(arguments).await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::InvalidArguments, "{arguments}");
        assert!(
            error.details.as_ref().unwrap().get("violations").is_some(),
            "{arguments}: the schema refused it: {error:?}"
        );
    }
}

/// Application code on a call's path that panics: the call is answered, the registry serves on.
mod panicking_application_code {
    use super::*;
    use toolgate::approval::{ApprovalAnswer, ApprovalRequest};
    use toolgate::audit::{AuditRecord, AuditSink};
    use toolgate::policy::{Decision, PolicyRequest};
    use toolgate::{Tool, ToolContext, ToolDefinition, ToolFuture};

    /// Panics when given a record, or, if `asked` is set, already when asked whether it
    /// wants one.
    struct PanickingSink {
        asked: bool,
    }

    impl AuditSink for PanickingSink {
        fn record(&self, _: &AuditRecord) {
            panic!("the sink broke");
        }

        fn wants_records(&self) -> bool {
            assert!(!self.asked, "the sink broke when asked");
            true
        }
    }

    /// A tool whose review panics.
    struct BadReview;

    impl Tool for BadReview {
        fn definition(&self) -> ToolDefinition {
            let mut definition = ToolDefinition::new(
                "bad_review",
                "Needs approval; its review panics.",
                "staff",
                json!({"type": "object", "properties": {}}),
            );
            definition.hints.destructive = true;
            definition
        }
        fn call(&self, _: ToolContext, _: Value) -> ToolFuture {
            Box::pin(async { Ok(json!("ran")) })
        }
        fn review(&self, _: &ToolContext, _: &Value) -> Result<Option<Value>, ToolError> {
            panic!("the review broke")
        }
    }

    fn staff() -> Caller {
        Caller::new("dr-lee", "staff")
    }

    #[tokio::test]
    async fn a_panicking_policy_refuses_the_call() {
        let registry = Registry::builder()
            .roles(["public", "staff", "admin"])
            .policy(|_: &PolicyRequest| -> Decision { panic!("the policy broke") })
            .build()
            .unwrap();
        let outcome = registry
            .call(&staff(), ToolCall::new("1", "small", json!({"n": 1})))
            .await;
        assert_eq!(outcome.error().unwrap().code, ErrorCode::Panicked);
    }

    #[tokio::test]
    async fn a_panicking_sink_loses_its_record_not_the_answer() {
        for asked in [false, true] {
            let registry = Registry::builder()
                .roles(["public", "staff", "admin"])
                .audit_sink(PanickingSink { asked })
                .build()
                .unwrap();
            let outcome = registry
                .call(&staff(), ToolCall::new("1", "small", json!({"n": 4})))
                .await;
            assert_eq!(outcome.result.unwrap()["n"], 4);
            assert_eq!(
                registry.history("dr-lee", 10).await.unwrap().len(),
                1,
                "history still kept it"
            );
        }
    }

    #[tokio::test]
    async fn a_panicking_review_refuses_the_call_before_anyone_is_asked() {
        let registry = Registry::builder()
            .roles(["public", "staff", "admin"])
            .tool(BadReview)
            .build()
            .unwrap();
        let outcome = registry
            .call(&staff(), ToolCall::new("1", "bad_review", json!({})))
            .await;
        assert_eq!(outcome.error().unwrap().code, ErrorCode::Panicked);
        assert!(
            registry
                .pending_approvals(&Caller::new("root", "admin"))
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_approver_that_panics_when_dropped_still_lets_the_call_be_cancelled() {
        let registry = Registry::builder()
            .roles(["public", "staff", "admin"])
            .approver("person", |_: ApprovalRequest| async {
                let _guard = PanicsOnDrop;
                std::future::pending::<()>().await;
                ApprovalAnswer::Approve
            })
            .build()
            .unwrap();
        let cancel = CancellationToken::new();
        let cancelling = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancelling.cancel();
        });
        let outcome = registry
            .call_with_cancel(
                &staff(),
                ToolCall::new("1", "restart", json!({"machine": "m"})),
                cancel,
            )
            .await;
        assert_eq!(outcome.error().unwrap().code, ErrorCode::Cancelled);
        let still = registry
            .call(&staff(), ToolCall::new("2", "small", json!({"n": 2})))
            .await;
        assert!(still.is_ok());
    }
}

/// A panic while answering an HTTP request: a JSON `500` for that request, and the router
/// answers the next one.
mod http_panics {
    use axum::body::Body;
    use axum::http::request::Parts;
    use axum::http::{Request, StatusCode, header};
    use serde_json::{Value, json};
    use toolgate::http::{AuthError, HttpOptions, router};
    use toolgate::prelude::*;
    use tower::ServiceExt;

    fn app() -> axum::Router {
        let registry = Registry::builder()
            .roles(["staff", "admin"])
            .build()
            .unwrap();
        // The application's own code, run in the request's extractor.
        let authenticate = |parts: &Parts| -> Result<Caller, AuthError> {
            if parts.headers.contains_key("x-break-the-hook") {
                panic!("the authentication hook broke");
            }
            Ok(Caller::new("ana", "staff"))
        };
        router(registry, authenticate, HttpOptions::default())
    }

    async fn send(app: &axum::Router, path: &str, body: Value, panic: bool) -> (StatusCode, Value) {
        let mut request = Request::post(path).header(header::CONTENT_TYPE, "application/json");
        if panic {
            request = request.header("x-break-the-hook", "1");
        }
        let request = request.body(Body::from(body.to_string())).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn a_panicking_hook_is_answered_with_json_and_the_router_serves_on() {
        let app = app();
        let call = json!({"name": "small", "arguments": {"n": 7}});
        for path in ["/tools/call", "/approvals/approve"] {
            let (status, body) = send(&app, path, call.clone(), true).await;
            assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}: {body}");
            assert_eq!(body["error"]["code"], "internal_error", "{path}: {body}");
            assert!(
                !body.to_string().contains("broke"),
                "the panic's text stays in: {body}"
            );
        }

        let (status, body) = send(&app, "/tools/call", call, false).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["ok"], true, "{body}");
        assert_eq!(body["result"], json!({"n": 7, "more": []}));
    }
}
