//! The approval console's server side: where its files are served and with which headers,
//! the UI component a tool names travelling with outcomes, events and HTTP bodies, `GET /me`,
//! what `GET /approvals` tells a person deciding, and approvers hearing each other's
//! decisions. (The page itself is tested in Chromium: examples/tests/console_browser.rs.)

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use toolgate::console::{Console, SignIn};
use toolgate::events::EventKind;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::prelude::*;
use toolgate::{BuildProblem, ToolDefinition};
use tower::ServiceExt;

/// Print a receipt.
#[tool(
    permission = "staff",
    group = "console_rs",
    read_only,
    ui = "receipt_card"
)]
fn print_receipt(
    /// The order.
    order: u32,
) -> Value {
    json!({"order": order, "total": 12.5})
}

/// Refund an order.
#[tool(
    permission = "staff",
    group = "console_rs",
    destructive,
    risk = "high",
    title = "Refund an order",
    ui = "receipt_card"
)]
fn refund(
    /// The order.
    order: u32,
) -> Value {
    json!({"refunded": order})
}

/// Close the shop for the day.
#[tool(permission = "admin", group = "console_rs", ui = "shop_card")]
fn close_shop() -> Value {
    json!({"closed": true})
}

fn registry() -> Registry {
    Registry::builder()
        .roles(["public", "staff", "admin"])
        .filter_linked(|tool| tool.group.as_deref() == Some("console_rs"))
        .approver_role("admin")
        .build()
        .unwrap()
}

fn caller_of(parts: &Parts) -> Result<Caller, AuthError> {
    match parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
    {
        Some("Bearer staff") => Ok(Caller::new("sam", "staff")),
        Some("Bearer admin") => Ok(Caller::new("ada", "admin")),
        Some("Bearer admin2") => Ok(Caller::new("abe", "admin")),
        _ => Err(AuthError::unauthenticated("sign in")),
    }
}

fn app(registry: Registry) -> Router {
    router(registry, caller_of, HttpOptions::default()).merge(
        Console::new()
            .title("Shop <approvals>")
            .sign_in(SignIn::BearerToken)
            .components("toolgate.component('receipt_card', (r) => toolgate.el('b', {}, r.total));")
            .router(),
    )
}

async fn get(
    app: &Router,
    path: &str,
    token: Option<&str>,
) -> (StatusCode, header::HeaderMap, String) {
    let mut request = Request::get(path);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
}

async fn post(app: &Router, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
    let request = Request::post(path)
        .header("authorization", format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn the_console_is_served_at_its_path_under_a_policy_that_runs_only_its_own_scripts() {
    let app = app(registry());
    for path in ["/console", "/console/"] {
        let (status, headers, page) = get(&app, path, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
        let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(
            policy.contains("script-src 'self'")
                && policy.contains("default-src 'none'")
                && policy.contains("frame-ancestors 'none'")
                && !policy.contains("unsafe"),
            "{policy}"
        );
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
        assert!(
            page.contains(r#"<script src="/console/console.js" defer>"#),
            "{page}"
        );
        assert!(!page.contains("{{"), "every placeholder is filled");
        assert!(!page.contains("<script>"), "no inline script: {page}");
    }
    let (status, headers, script) = get(&app, "/console/console.js", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(script.contains("textContent") || script.contains("createTextNode"));
    assert!(
        !script.contains("innerHTML"),
        "the console never writes markup"
    );
    let (_, headers, _) = get(&app, "/console/console.css", None).await;
    assert_eq!(headers[header::CONTENT_TYPE], "text/css");
    let (_, _, components) = get(&app, "/console/components.js", None).await;
    assert!(components.contains("receipt_card"));
    let (_, _, config) = get(&app, "/console/config.json", None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&config).unwrap(),
        json!({"api": "", "title": "Shop <approvals>", "sign_in": "bearer_token"})
    );
    // What is not the console's is the router's: a JSON 404.
    let (status, _, body) = get(&app, "/console/secrets", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("not_found"), "{body}");

    // Elsewhere, and at the root.
    let elsewhere = Console::new().at("/admin/approve/").api("/api/").router();
    let (status, _, page) = get(&elsewhere, "/admin/approve", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"href="/admin/approve/console.css""#),
        "{page}"
    );
    let (_, _, config) = get(&elsewhere, "/admin/approve/config.json", None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&config).unwrap()["api"],
        "/api"
    );
    let root = Console::new().at("/").router();
    let (status, _, page) = get(&root, "/", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains(r#"src="/console.js""#), "{page}");
    assert_eq!(get(&root, "/console.js", None).await.0, StatusCode::OK);
}

#[test]
fn a_console_path_that_could_break_the_page_is_refused() {
    for path in ["console", "/a\"b", "/a b", "/<script>", "/a?b"] {
        let refused = std::panic::catch_unwind(|| Console::new().at(path));
        assert!(refused.is_err(), "{path:?} was taken");
    }
}

#[tokio::test]
async fn the_ui_component_travels_with_outcomes_events_and_http_bodies() {
    let registry = registry();
    let staff = Caller::new("sam", "staff");
    let mut events = registry.events();
    let outcome = registry
        .call(
            &staff,
            ToolCall::new("1", "print_receipt", json!({"order": 7})),
        )
        .await;
    assert_eq!(outcome.ui.as_deref(), Some("receipt_card"));
    let finished = loop {
        let event = events.recv().await.unwrap();
        if let EventKind::CallFinished { ui, .. } = &event.kind {
            break ui.clone();
        }
    };
    assert_eq!(finished.as_deref(), Some("receipt_card"));
    assert_eq!(
        serde_json::to_value(&outcome).unwrap()["ui"],
        "receipt_card"
    );

    // A failed call of a visible tool still names it; a hidden tool's call does not (it
    // must answer exactly as an unknown tool does).
    let failed = registry
        .call(
            &staff,
            ToolCall::new("2", "print_receipt", json!({"order": "x"})),
        )
        .await;
    assert_eq!(failed.ui.as_deref(), Some("receipt_card"));
    let hidden = registry
        .call(&staff, ToolCall::new("3", "close_shop", json!({})))
        .await;
    let unknown = registry
        .call(&staff, ToolCall::new("3", "close_shops", json!({})))
        .await;
    assert_eq!(hidden.ui, None);
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
            .collect::<Vec<_>>(),
    );
    let without = Registry::builder()
        .roles(["public"])
        .filter_linked(|_| false)
        .build()
        .unwrap();
    let plain = without
        .call(
            &Caller::new("p", "public"),
            ToolCall::new("4", "nope", json!({})),
        )
        .await;
    assert!(serde_json::to_value(&plain).unwrap().get("ui").is_none());

    let app = app(registry.clone());
    let (_, body) = post(
        &app,
        "/tools/call",
        "staff",
        json!({"name": "print_receipt", "arguments": {"order": 1}}),
    )
    .await;
    assert_eq!(body["ui"], "receipt_card", "{body}");
    let (_, hidden) = post(
        &app,
        "/tools/call",
        "staff",
        json!({"name": "close_shop", "arguments": {}}),
    )
    .await;
    assert!(hidden.get("ui").is_none(), "{hidden}");
    let (_, batch) = post(
        &app,
        "/tools/call",
        "staff",
        json!({"calls": [{"name": "print_receipt", "arguments": {"order": 1}}]}),
    )
    .await;
    assert_eq!(batch["outcomes"][0]["ui"], "receipt_card", "{batch}");
}

#[tokio::test]
async fn a_bad_component_name_is_refused_when_a_tool_registers() {
    struct Named(String);
    impl toolgate::Tool for Named {
        fn definition(&self) -> ToolDefinition {
            let mut definition = ToolDefinition::new(
                "named",
                "A tool with a component.",
                "public",
                json!({"type": "object"}),
            );
            definition.ui = Some(self.0.clone());
            definition
        }
        fn call(&self, _: toolgate::ToolContext, _: Value) -> toolgate::ToolFuture {
            Box::pin(async { Ok(json!(null)) })
        }
    }
    let registry = Registry::builder()
        .roles(["public"])
        .filter_linked(|_| false)
        .build()
        .unwrap();
    for bad in ["", "pet card", "9lives", "<b>", &"x".repeat(65)] {
        let error = registry.register(Named(bad.to_owned())).unwrap_err();
        assert!(
            matches!(&error.problems()[0], BuildProblem::InvalidUiName { ui, .. } if ui == bad),
            "{bad:?}: {error}"
        );
        assert!(
            error.to_string().contains("starting with a letter"),
            "{error}"
        );
    }
    registry.register(Named("pet_card-2".to_owned())).unwrap();
}

#[tokio::test]
async fn me_and_approvals_tell_a_person_what_to_decide() {
    let app = app(registry());
    let (status, _, me) = get(&app, "/me", Some("admin")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<Value>(&me).unwrap(),
        json!({"id": "ada", "role": "admin", "approver": true})
    );
    let (_, _, me) = get(&app, "/me", Some("staff")).await;
    assert_eq!(
        serde_json::from_str::<Value>(&me).unwrap()["approver"],
        false
    );
    let (status, _, _) = get(&app, "/me", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let before = toolgate_time_now();
    let (_, waiting) = post(
        &app,
        "/tools/call",
        "staff",
        json!({"name": "refund", "arguments": {"order": 9}}),
    )
    .await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
    let (_, _, listing) = get(&app, "/approvals", Some("admin")).await;
    let listing: Value = serde_json::from_str(&listing).unwrap();
    let call = &listing["pending"][0];
    assert_eq!(call["tool"], "refund");
    assert_eq!(call["title"], "Refund an order");
    assert_eq!(call["risk"], "high");
    assert_eq!(call["description"], "Refund an order.");
    assert_eq!(call["caller"], "sam");
    let requested = call["requested"].as_u64().unwrap();
    assert!(
        requested >= before && requested <= toolgate_time_now(),
        "{call}"
    );
    assert!(call["expires"].as_u64().unwrap() > requested);
    let (_, _, staff_listing) = get(&app, "/approvals", Some("staff")).await;
    assert_eq!(
        serde_json::from_str::<Value>(&staff_listing).unwrap()["pending"],
        json!([])
    );
}

fn toolgate_time_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Reads server-sent events until one of type `wanted` comes: every event read, that one
/// last; panics after `patience`.
async fn events_until(
    response: &mut reqwest::Response,
    wanted: &str,
    patience: Duration,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + patience;
    let mut buffer = String::new();
    let mut seen = Vec::new();
    loop {
        let chunk = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .unwrap_or_else(|_| panic!("no {wanted} event; read {seen:?}"))
            .unwrap()
            .expect("the stream stays open");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let data: String = block
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .collect();
            let Ok(event) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            let done = event["type"] == wanted;
            seen.push(event);
            if done {
                return seen;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvers_hear_each_others_decisions_and_others_do_not() {
    let app = app(registry());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = reqwest::Client::new();
    let listen = |token: &'static str| {
        client
            .get(format!("{base}/events"))
            .bearer_auth(token)
            .send()
    };
    let mut other_admin = listen("admin2").await.unwrap();
    let mut bystander = listen("staff").await.unwrap();
    let call = |token: &'static str, path: &str, body: Value| {
        client
            .post(format!("{base}{path}"))
            .bearer_auth(token)
            .json(&body)
            .send()
    };
    // A call by ada herself, which she then approves: abe (an approver) hears both the
    // request and the decision; sam (staff, no approver) hears neither.
    let waiting: Value = call(
        "admin",
        "/tools/call",
        json!({"name": "refund", "arguments": {"order": 3}}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let ticket = waiting["error"]["details"]["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let patience = Duration::from_secs(30);
    let heard = events_until(&mut other_admin, "approval_requested", patience).await;
    assert_eq!(heard.last().unwrap()["tool"], "refund");
    assert!(ticket.len() > 100, "the signed ticket is long");
    // The short id a listing shows decides the call as well as the whole ticket does.
    let short = waiting["error"]["details"]["ticket_id"].clone();
    let approved = call("admin", "/approvals/approve", json!({"ticket": short}))
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    for spent in [short, json!("00ff00ff00ff00ff00ff00ff00ff00ff")] {
        let again = call("admin", "/approvals/approve", json!({"ticket": spent}))
            .await
            .unwrap();
        assert_eq!(again.status(), 409, "decided already, or no such call");
    }
    let heard = events_until(&mut other_admin, "approval_decided", patience).await;
    assert!(
        heard
            .iter()
            .all(|event| event["type"] == "approval_decided"),
        "an approver hears requests and decisions, not another's calls: {heard:?}"
    );
    let decided = heard.last().unwrap();
    assert_eq!(decided["decided_by"], "ada");
    assert_eq!(decided["decision"], "approved");
    // Nothing of ada's reached sam: the first event he gets is his own call's.
    call(
        "staff",
        "/tools/call",
        json!({"name": "print_receipt", "arguments": {"order": 1}}),
    )
    .await
    .unwrap();
    let heard = events_until(&mut bystander, "call_requested", patience).await;
    assert_eq!(
        heard.len(),
        1,
        "sam's own call is the first he hears of: {heard:?}"
    );
    assert_eq!(heard[0]["caller"], "sam");
}
