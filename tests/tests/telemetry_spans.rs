//! The spans toolgate makes, read from an in-memory exporter: one per call by the GenAI
//! conventions with the registry's facts, refusals as errors, secrets never shown, approvals
//! on the span (in process) or linked (by ticket, on another instance), HTTP requests and
//! agent runs as parents. The same trees in a real backend: `telemetry_phoenix.rs`.

mod agent;
mod telemetry;

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use opentelemetry::trace::{SpanKind, TraceContextExt, Tracer, TracerProvider as _};
use serde_json::json;
use telemetry::{Recorded, attribute, exported_text, is_error};
use toolgate::RegistryBuilder;
use toolgate::agent::Agent;
use toolgate::approval::ApprovalAnswer;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::prelude::*;
use toolgate::store::sqlite::SqliteStore;
use tower::ServiceExt;

const SECRET: &str = "sk-live-Tr0ub4dor-and-3";

/// The weather in a city.
#[tool(permission = "public", read_only)]
fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Reads the admin's notes.
#[tool(permission = "admin", read_only)]
fn admin_notes() -> &'static str {
    "private"
}

/// Calls a payment API with a key (and, carelessly, says the key back).
#[tool(permission = "public")]
fn charge(
    amount: u32,
    /// The API key.
    #[secret]
    api_key: String,
) -> Result<String, ToolError> {
    if amount == 0 {
        return Err(ToolError::execution(format!(
            "key {api_key} refused a zero charge"
        )));
    }
    Ok(format!("charged {amount} with {api_key}"))
}

/// Deletes a city from the forecast.
#[tool(permission = "public", destructive)]
fn forget_city(city: String) -> String {
    format!("forgot {city}")
}

fn builder() -> RegistryBuilder {
    Registry::builder()
        .roles(["public", "staff", "admin"])
        .approver_role("staff")
}

fn public() -> Caller {
    Caller::new("ada", "public")
}

#[tokio::test]
async fn a_call_is_one_span_by_the_genai_conventions_with_the_registrys_facts() {
    let recorded = Recorded::new();
    let registry = builder()
        .telemetry(recorded.telemetry(false))
        .build()
        .unwrap();
    let call = ToolCall::new("call-1", "get_weather", json!({"city": "Oslo"}));
    assert!(registry.call(&public(), call).await.is_ok());

    let span = recorded.span("execute_tool get_weather");
    assert_eq!(span.span_kind, SpanKind::Internal);
    for (key, value) in [
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "get_weather"),
        ("gen_ai.tool.call.id", "call-1"),
        ("gen_ai.tool.type", "function"),
        ("toolgate.caller.role", "public"),
        ("toolgate.front", "library"),
        ("toolgate.decision", "allow"),
        ("toolgate.outcome", "ok"),
    ] {
        assert_eq!(attribute(&span, key).as_deref(), Some(value), "{key}");
    }
    assert!(!is_error(&span));
    // Content only on opt-in.
    assert_eq!(attribute(&span, "gen_ai.tool.call.arguments"), None);
    assert_eq!(attribute(&span, "gen_ai.tool.call.result"), None);
}

#[tokio::test]
async fn refused_calls_are_error_spans_and_a_hidden_tool_looks_like_an_unknown_one() {
    let recorded = Recorded::new();
    let registry = builder()
        .telemetry(recorded.telemetry(true))
        .build()
        .unwrap();
    let hidden = ToolCall::new("h", "admin_notes", json!({}));
    let unknown = ToolCall::new("u", "admin_notez", json!({}));
    let invalid = ToolCall::new("i", "get_weather", json!({"city": 5}));
    for call in [hidden, unknown, invalid] {
        assert!(!registry.call(&public(), call).await.is_ok());
    }
    let hidden = recorded.span("execute_tool admin_notes");
    let unknown = recorded.span("execute_tool admin_notez");
    for span in [&hidden, &unknown] {
        assert!(is_error(span));
        assert_eq!(
            attribute(span, "error.type").as_deref(),
            Some("unknown_tool")
        );
        assert_eq!(
            attribute(span, "toolgate.decision").as_deref(),
            Some("not_reached")
        );
    }
    // The same attributes, but for the names the caller wrote itself.
    let keys = |span: &opentelemetry_sdk::trace::SpanData| {
        let mut keys: Vec<String> = span
            .attributes
            .iter()
            .map(|kv| kv.key.to_string())
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&hidden), keys(&unknown));
    let invalid = recorded.span("execute_tool get_weather");
    assert_eq!(
        attribute(&invalid, "error.type").as_deref(),
        Some("invalid_arguments")
    );
}

#[tokio::test]
async fn a_secret_never_appears_in_a_span_even_with_content_captured() {
    let recorded = Recorded::new();
    let registry = builder()
        .telemetry(recorded.telemetry(true))
        .build()
        .unwrap();
    let calls = [
        ToolCall::new("ok", "charge", json!({"amount": 5, "api_key": SECRET})),
        ToolCall::new("fails", "charge", json!({"amount": 0, "api_key": SECRET})),
        ToolCall::new(
            "invalid",
            "charge",
            json!({"amount": -1, "api_key": SECRET}),
        ),
        ToolCall::new(
            "malformed",
            "charge",
            format!(r#"{{"amount": 1, "api_key": "{SECRET}""#),
        ),
        // Refused by the schema: the secret under a name the tool does not know.
        ToolCall::new(
            "extra",
            "charge",
            json!({"amount": 1, "api_key": SECRET, "x": SECRET}),
        ),
    ];
    for call in calls {
        registry.call(&public(), call).await;
    }
    let spans = recorded.spans();
    assert_eq!(spans.len(), 5);
    for span in &spans {
        let text = exported_text(span);
        assert!(!text.contains(SECRET), "{text}");
        assert!(!text.contains("Tr0ub4dor"), "{text}");
    }
    let ok = spans
        .iter()
        .find(|span| attribute(span, "gen_ai.tool.call.id").as_deref() == Some("ok"))
        .unwrap();
    let arguments = attribute(ok, "gen_ai.tool.call.arguments").unwrap();
    assert!(
        arguments.contains("[redacted]") && arguments.contains("\"amount\":5"),
        "{arguments}"
    );
    let result = attribute(ok, "gen_ai.tool.call.result").unwrap();
    assert!(result.contains("charged 5 with [redacted]"), "{result}");
}

#[tokio::test]
async fn captured_content_is_cut_at_its_bound() {
    let recorded = Recorded::new();
    let telemetry = toolgate::telemetry::Telemetry::builder()
        .tracer_provider(&recorded.provider)
        .capture_content(true)
        .max_captured_bytes(64)
        .build();
    let registry = builder().telemetry(telemetry).build().unwrap();
    let city = "x".repeat(10_000);
    registry
        .call(
            &public(),
            ToolCall::new("1", "get_weather", json!({"city": city})),
        )
        .await;
    let span = recorded.span("execute_tool get_weather");
    let result = attribute(&span, "gen_ai.tool.call.result").unwrap();
    assert!(
        result.len() < 200 && result.contains("more bytes left out"),
        "{result}"
    );
}

#[tokio::test]
async fn an_approval_asked_in_process_is_on_the_calls_span() {
    let recorded = Recorded::new();
    let approver = |_request| async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        ApprovalAnswer::Approve
    };
    let registry = builder()
        .telemetry(recorded.telemetry(false))
        .approver("desk", approver)
        .build()
        .unwrap();
    let call = ToolCall::new("1", "forget_city", json!({"city": "Oslo"}));
    assert!(registry.call(&public(), call).await.is_ok());
    let span = recorded.span("execute_tool forget_city");
    assert_eq!(
        attribute(&span, "toolgate.approval.asked").as_deref(),
        Some("true")
    );
    assert_eq!(
        attribute(&span, "toolgate.approval.decided_by").as_deref(),
        Some("desk")
    );
    assert_eq!(
        attribute(&span, "toolgate.decision").as_deref(),
        Some("approved")
    );
    let waited: f64 = attribute(&span, "toolgate.approval.wait_s")
        .unwrap()
        .parse()
        .unwrap();
    assert!(waited >= 0.02, "{waited}");
    let events: Vec<_> = span
        .events
        .events
        .iter()
        .map(|event| event.name.to_string())
        .collect();
    assert_eq!(
        events,
        ["toolgate.approval.requested", "toolgate.approval.decided"]
    );
}

#[tokio::test]
async fn a_call_approved_later_on_another_instance_links_to_the_span_that_asked() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("state.db");
    let recorded = Recorded::new();
    let instance = |store: SqliteStore| {
        builder()
            .telemetry(recorded.telemetry(false))
            .pending_store(store)
            .approval_key(b"one key for every instance, 32+ bytes".to_vec())
            .build()
            .unwrap()
    };
    let asking = instance(SqliteStore::open(&path).await.unwrap());
    let deciding = instance(SqliteStore::open(&path).await.unwrap());

    let call = ToolCall::new("1", "forget_city", json!({"city": "Oslo"}));
    let waiting = asking.call(&public(), call).await;
    let ticket = waiting.error().unwrap().details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let asked = recorded.span("execute_tool forget_city");
    assert_eq!(
        attribute(&asked, "toolgate.decision").as_deref(),
        Some("pending_approval")
    );
    assert_eq!(
        attribute(&asked, "toolgate.approval.ticket").as_deref(),
        Some("true")
    );

    // The approver's own request is the new span's parent; the asking span is its link.
    let tracer = recorded.provider.tracer("approver-ui");
    let request = tracer.start("POST /approvals/approve");
    let request_context = opentelemetry::Context::current_with_span(request);
    let staff = Caller::new("dr-lee", "staff");
    let approved = {
        use opentelemetry::context::FutureExt;
        deciding
            .approve(&ticket, &staff)
            .with_context(request_context.clone())
            .await
            .unwrap()
    };
    assert!(approved.is_ok());
    request_context.span().end();
    let spans: Vec<_> = recorded
        .spans()
        .into_iter()
        .filter(|span| span.name == "execute_tool forget_city")
        .collect();
    let decided = spans
        .iter()
        .find(|span| span.span_context != asked.span_context)
        .unwrap();
    assert_eq!(decided.links.links.len(), 1);
    let link = &decided.links.links[0].span_context;
    assert_eq!(link.trace_id(), asked.span_context.trace_id());
    assert_eq!(link.span_id(), asked.span_context.span_id());
    assert_eq!(
        decided.parent_span_id,
        request_context.span().span_context().span_id()
    );
    assert_eq!(
        attribute(decided, "toolgate.approval.decided_by").as_deref(),
        Some("dr-lee")
    );
    assert_eq!(
        attribute(decided, "toolgate.decision").as_deref(),
        Some("approved")
    );
}

#[tokio::test]
async fn an_http_request_carries_its_trace_in_and_the_call_is_its_child() {
    let recorded = Recorded::new();
    let registry = builder()
        .telemetry(recorded.telemetry(false))
        .build()
        .unwrap();
    let auth = |_: &axum::http::request::Parts| -> Result<Caller, AuthError> { Ok(public()) };
    let app = router(registry, auth, HttpOptions::default());
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let request = Request::post("/tools/call")
        .header("content-type", "application/json")
        .header("traceparent", traceparent)
        .body(Body::from(
            json!({"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}).to_string(),
        ))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);

    let server = recorded.span("POST /tools/call");
    let call = recorded.span("execute_tool get_weather");
    assert_eq!(server.span_kind, SpanKind::Server);
    assert_eq!(
        server.span_context.trace_id().to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(server.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(server.parent_span_is_remote);
    assert_eq!(call.parent_span_id, server.span_context.span_id());
    assert_eq!(call.span_context.trace_id(), server.span_context.trace_id());
    assert_eq!(
        attribute(&server, "http.route").as_deref(),
        Some("/tools/call")
    );
    assert_eq!(
        attribute(&server, "http.response.status_code").as_deref(),
        Some("200")
    );
    assert_eq!(attribute(&call, "toolgate.front").as_deref(), Some("http"));
}

#[tokio::test]
async fn an_agent_run_is_the_parent_of_its_model_requests_and_its_calls() {
    use agent::{Ran, Scripted, calls, text};
    let recorded = Recorded::new();
    let ran = Ran::default();
    let mut first = calls(&[
        ("c1", "lookup_pet", r#"{"name": "Rex"}"#),
        ("c2", "transfer", r#"{"amount": 5, "to": "vet"}"#),
        ("c3", "delete_everything", "{}"),
    ]);
    first.usage.input_tokens = 120;
    first.usage.output_tokens = 30;
    let model = Scripted::new([first, text("Done.")]);
    let registry = agent::builder(&ran)
        .telemetry(recorded.telemetry(false))
        .approver("front-desk", |_request| async { ApprovalAnswer::Approve })
        .build()
        .unwrap();
    let run = Agent::builder(registry, model)
        .build()
        .run(&Caller::new("cust-1", "customer"), "Pay the vet")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Done."));

    let spans = recorded.spans();
    let root = recorded.span("invoke_agent toolgate");
    assert_eq!(
        attribute(&root, "gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(
        attribute(&root, "gen_ai.conversation.id").as_deref(),
        Some(run.id().as_str())
    );
    assert_eq!(
        attribute(&root, "toolgate.run.status").as_deref(),
        Some("finished")
    );
    let children: Vec<_> = spans
        .iter()
        .filter(|span| span.parent_span_id == root.span_context.span_id())
        .collect();
    let chats: Vec<_> = children
        .iter()
        .filter(|span| span.name == "chat unknown")
        .collect();
    assert_eq!(chats.len(), 2);
    assert_eq!(
        attribute(chats[0], "gen_ai.usage.input_tokens").as_deref(),
        Some("120")
    );
    assert_eq!(
        attribute(chats[0], "gen_ai.response.finish_reasons").as_deref(),
        Some("[\"tool_calls\"]")
    );
    assert_eq!(chats[0].span_kind, SpanKind::Client);
    let tool = |name: &str| {
        children
            .iter()
            .find(|span| span.name == format!("execute_tool {name}"))
            .unwrap_or_else(|| panic!("no span of {name}"))
    };
    assert!(!is_error(tool("lookup_pet")));
    assert_eq!(
        attribute(tool("transfer"), "toolgate.approval.decided_by").as_deref(),
        Some("front-desk")
    );
    assert_eq!(
        attribute(tool("transfer"), "toolgate.front").as_deref(),
        Some("agent")
    );
    assert!(is_error(tool("delete_everything")));
    assert_eq!(
        attribute(tool("lookup_pet"), "toolgate.run.id").as_deref(),
        Some(run.id().as_str())
    );
}

#[tokio::test]
async fn without_telemetry_nothing_is_made() {
    let recorded = Recorded::new();
    let registry = builder().build().unwrap();
    registry
        .call(
            &public(),
            ToolCall::new("1", "get_weather", json!({"city": "Oslo"})),
        )
        .await;
    assert!(recorded.spans().is_empty());
}

#[tokio::test]
async fn a_dry_run_and_a_rate_limited_call_say_so_on_their_spans() {
    use toolgate::rate_limits::RateLimit;
    let recorded = Recorded::new();
    let registry = builder()
        .telemetry(recorded.telemetry(false))
        .rate_limit_per_caller(RateLimit::new(2, Duration::from_secs(60)))
        .build()
        .unwrap();
    let options = CallOptions {
        dry_run: true,
        ..CallOptions::default()
    };
    let call = |id: &str| ToolCall::new(id, "get_weather", json!({"city": "Oslo"}));
    registry.call_with(&public(), call("dry"), options).await;
    registry.call(&public(), call("1")).await;
    registry.call(&public(), call("2")).await;
    let limited = registry.call(&public(), call("3")).await;
    assert_eq!(limited.error().unwrap().code, ErrorCode::RateLimited);

    let spans = recorded.spans();
    let by_id = |id: &str| {
        spans
            .iter()
            .find(|span| attribute(span, "gen_ai.tool.call.id").as_deref() == Some(id))
            .unwrap_or_else(|| panic!("no span of call {id}"))
    };
    assert_eq!(
        attribute(by_id("dry"), "toolgate.dry_run").as_deref(),
        Some("true")
    );
    assert_eq!(
        attribute(by_id("dry"), "toolgate.decision").as_deref(),
        Some("dry_run")
    );
    assert_eq!(attribute(by_id("1"), "toolgate.rate_limited"), None);
    let limited = by_id("3");
    assert_eq!(
        attribute(limited, "toolgate.rate_limited").as_deref(),
        Some("true")
    );
    assert_eq!(
        attribute(limited, "error.type").as_deref(),
        Some("rate_limited")
    );
    assert!(is_error(limited));
}
