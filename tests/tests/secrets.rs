//! A `#[secret]` argument's value leaves through no path: audit file, history, tracing at
//! every level, outcomes and error messages, dry runs, tickets, pending approvals, the
//! in-process approver, approving and denying, HTTP bodies and MCP results.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{Request, header};
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::ToolArguments;
use toolgate::approval::{ApprovalAnswer, ApprovalRequest};
use toolgate::audit::{JsonlFileSink, TracingSink};
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::prelude::*;
use toolgate_tests::capture_async;
use tower::ServiceExt;

const SECRET: &str = "hunter2-Sup3rSecret";

/// Log in to a service.
#[tool(permission = "user", read_only)]
fn sign_in(
    user: String,
    /// The password.
    #[secret]
    #[schemars(length(min = 30))]
    password: String,
) -> String {
    let _ = password;
    format!("{user} signed in")
}

/// Rotate a credential.
#[tool(permission = "user", destructive)]
fn rotate(
    account: String,
    /// The new key.
    #[secret]
    #[serde(rename = "newKey")]
    new_key: String,
) -> String {
    let _ = new_key;
    format!("rotated {account}")
}

fn user() -> Caller {
    Caller::new("alice", "user")
}

fn admin() -> Caller {
    Caller::new("root", "admin")
}

/// Every way a secret can be sent, well-formed or not.
fn attempts() -> Vec<ToolCall> {
    let long = format!("{SECRET}{}", "x".repeat(40));
    vec![
        ToolCall::new("ok", "sign_in", json!({"user": "a", "password": long})),
        ToolCall::new("short", "sign_in", json!({"user": "a", "password": SECRET})),
        ToolCall::new("type", "sign_in", json!({"user": 5, "password": SECRET})),
        ToolCall::new(
            "malformed",
            "sign_in",
            format!(r#"{{"user": "a", "password": "{SECRET}""#),
        ),
        ToolCall::new(
            "too-large",
            "sign_in",
            format!(
                r#"{{"user": "{}", "password": "{SECRET}"}}"#,
                "a".repeat(2 * 1024 * 1024)
            ),
        ),
        ToolCall::new(
            "too-deep",
            "sign_in",
            format!(
                r#"{{"password": "{SECRET}", "user": {}{}}}"#,
                "[".repeat(100),
                "]".repeat(100)
            ),
        ),
        ToolCall::new("not-object", "sign_in", format!(r#"["{SECRET}"]"#)),
        ToolCall::new(
            "pending",
            "rotate",
            json!({"account": "a", "newKey": SECRET}),
        ),
    ]
}

fn must_not_leak(place: &str, text: &str) {
    assert!(
        !text.contains(SECRET),
        "the secret leaked through {place}: {text}"
    );
}

fn registry(dir: &TempDir) -> Registry {
    Registry::builder()
        .roles(["user", "admin"])
        .audit_sink(JsonlFileSink::open(dir.path().join("audit.jsonl")).unwrap())
        .audit_sink(TracingSink)
        .build()
        .unwrap()
}

#[test]
fn no_call_path_of_the_registry_reveals_a_secret() {
    let dir = TempDir::new().unwrap();
    let registry = registry(&dir);
    let (seen, log) = capture_async("trace", async {
        let mut seen = Vec::new();
        for call in attempts() {
            let outcome = registry.call(&user(), call.clone()).await;
            seen.push(serde_json::to_string(&outcome).unwrap());
            let dry = registry
                .call_with(
                    &user(),
                    call,
                    CallOptions {
                        dry_run: true,
                        ..CallOptions::default()
                    },
                )
                .await;
            seen.push(serde_json::to_string(&dry).unwrap());
        }
        let batch = registry.run_batch(&user(), attempts()).await;
        seen.push(serde_json::to_string(&batch).unwrap());
        let pending = registry.pending_approvals(&admin()).await.unwrap();
        assert_eq!(pending.len(), 2, "one ticket per rotate call");
        seen.push(serde_json::to_string(&pending).unwrap());
        let approved = registry
            .approve(&pending[0].ticket, &admin())
            .await
            .unwrap();
        assert_eq!(
            approved.result.as_ref().unwrap(),
            "rotated a",
            "runs with the real value"
        );
        seen.push(serde_json::to_string(&approved).unwrap());
        let denied = registry
            .deny(&pending[1].ticket, &admin(), "no")
            .await
            .unwrap();
        seen.push(serde_json::to_string(&denied).unwrap());
        seen.push(serde_json::to_string(&registry.history("alice", 100).await.unwrap()).unwrap());
        seen.push(serde_json::to_string(&registry.history("root", 100).await.unwrap()).unwrap());
        seen
    });
    for (index, text) in seen.iter().enumerate() {
        must_not_leak(&format!("returned value #{index}"), text);
    }
    must_not_leak("tracing", &log);
    assert!(log.contains("sign_in"), "the calls were logged: {log}");
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    must_not_leak("the audit file", &audit);
    assert!(audit.contains("\"unreadable\":true"), "{audit}");
    // A violation at a secret path names the rule, not the value.
    let short = &seen[2];
    assert!(short.contains("/password"), "{short}");
    // Tickets carry a keyed digest of the arguments, not a plain hash a holder could test
    // guesses against.
    let tickets = &seen[seen.len() - 5];
    must_not_leak("tickets", tickets);
}

#[tokio::test]
async fn an_in_process_approver_sees_secrets_redacted_and_the_call_keeps_them() {
    let shown: Arc<Mutex<Option<Value>>> = Arc::default();
    let keep = Arc::clone(&shown);
    let registry = Registry::builder()
        .roles(["user", "admin"])
        .approver("person", move |request: ApprovalRequest| {
            *keep.lock().unwrap() = Some(request.arguments.clone());
            let mut edited = request.arguments;
            edited["account"] = json!("b");
            async move { ApprovalAnswer::ApproveWithArguments(edited) }
        })
        .build()
        .unwrap();
    let outcome = registry
        .call(
            &user(),
            ToolCall::new("1", "rotate", json!({"account": "a", "newKey": SECRET})),
        )
        .await;
    assert_eq!(outcome.result.unwrap(), "rotated b");
    let shown = shown.lock().unwrap().clone().unwrap();
    assert_eq!(shown, json!({"account": "a", "newKey": "[redacted]"}));
}

#[tokio::test]
async fn http_bodies_never_carry_a_secret() {
    let registry = Registry::builder()
        .roles(["user", "admin"])
        .build()
        .unwrap();
    let authenticate = |parts: &Parts| -> Result<Caller, AuthError> {
        match parts.headers.get("authorization").map(|v| v.as_bytes()) {
            Some(b"Bearer admin") => Ok(admin()),
            _ => Ok(user()),
        }
    };
    let app = router(registry, authenticate, HttpOptions::default());
    let send = |body: Value, path: &str, admin: bool| {
        let mut request = Request::post(path).header(header::CONTENT_TYPE, "application/json");
        if admin {
            request = request.header("authorization", "Bearer admin");
        }
        app.clone()
            .oneshot(request.body(Body::from(body.to_string())).unwrap())
    };
    let text = |response: axum::response::Response| async move {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    };
    let calls: Vec<Value> = attempts()
        .into_iter()
        .filter_map(|call| match call.arguments {
            ToolArguments::Value(arguments) => {
                Some(json!({"id": call.id, "name": call.name, "arguments": arguments}))
            }
            _ => None,
        })
        .collect();
    let answer = text(
        send(json!({"calls": calls}), "/tools/call", false)
            .await
            .unwrap(),
    )
    .await;
    must_not_leak("POST /tools/call", &answer);
    let dry = text(
        send(
            json!({"calls": calls, "dry_run": true}),
            "/tools/call",
            false,
        )
        .await
        .unwrap(),
    )
    .await;
    must_not_leak("a dry run over HTTP", &dry);
    let listing = app
        .clone()
        .oneshot(
            Request::get("/approvals")
                .header("authorization", "Bearer admin")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let listing: Value = serde_json::from_str(&text(listing).await).unwrap();
    must_not_leak("GET /approvals", &listing.to_string());
    let ticket = listing["pending"][0]["ticket"].as_str().unwrap().to_owned();
    let denied = text(
        send(json!({"ticket": ticket}), "/approvals/deny", true)
            .await
            .unwrap(),
    )
    .await;
    must_not_leak("POST /approvals/deny", &denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_results_never_carry_a_secret() {
    use rmcp::model::CallToolRequestParams;
    let registry = Registry::builder()
        .roles(["user", "admin"])
        .build()
        .unwrap();
    let server = toolgate::mcp::McpServer::for_caller(registry, user());
    let client = toolgate_tests::connect_in_memory(server, ()).await;
    for call in attempts() {
        let ToolArguments::Value(Value::Object(arguments)) = call.arguments else {
            continue;
        };
        let request = CallToolRequestParams::new(call.name.to_string()).with_arguments(arguments);
        let answer = match client.peer().call_tool_once(request).await {
            Ok(result) => format!("{result:?}"),
            Err(error) => error.to_string(),
        };
        must_not_leak(&format!("MCP tools/call of `{}`", call.id), &answer);
    }
}
