//! Spans in a real OpenTelemetry backend: Arize Phoenix, installed from PyPI and started on
//! 127.0.0.1 by the test, receiving OTLP over HTTP/protobuf and over gRPC from
//! [`Telemetry::otlp`], its REST API read back. The span tree of an HTTP call, of an agent
//! run with two model turns and three tool calls (one refused, one approved by a person),
//! and a secret that never reaches the backend with content captured. (Across processes, MCP
//! and imported servers: `cli/tests/cli/telemetry.rs`.)

mod agent;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate::RegistryBuilder;
use toolgate::agent::Agent;
use toolgate::approval::ApprovalAnswer;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::prelude::*;
use toolgate::telemetry::{OtlpProtocol, OtlpSettings, Telemetry};
use toolgate_test_support::Phoenix;

const SECRET: &str = "pk-Phoenix-n3ver-sees-this";

/// The weather in a city.
#[tool(permission = "public", read_only)]
fn city_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Signs in to the weather service.
#[tool(permission = "public")]
fn weather_login(
    /// The account's password.
    #[secret]
    password: String,
) -> String {
    format!("signed in with {password}")
}

fn telemetry(phoenix: &Phoenix, protocol: OtlpProtocol, service: &str) -> Telemetry {
    let mut settings = OtlpSettings::default();
    settings.endpoint = Some(match protocol {
        OtlpProtocol::Grpc => phoenix.grpc.clone(),
        _ => phoenix.url.clone(),
    });
    settings.protocol = Some(protocol);
    settings.service_name = Some(service.to_owned());
    settings.capture_content = true;
    Telemetry::otlp(&settings).expect("the exporter is made")
}

/// Sends what is batched (the exporters block: not on the runtime's threads).
async fn flush(telemetry: &Telemetry) {
    let telemetry = telemetry.clone();
    tokio::task::spawn_blocking(move || telemetry.flush())
        .await
        .unwrap();
}

/// The spans of `trace` Phoenix holds, once it holds at least `at_least`.
async fn trace_spans(phoenix: &Phoenix, trace: &str, at_least: usize) -> Vec<Value> {
    let url = format!("{}/v1/projects/default/spans?limit=1000", phoenix.url);
    let started = Instant::now();
    loop {
        let spans: Vec<Value> = match reqwest::get(&url).await {
            Ok(response) => response
                .json::<Value>()
                .await
                .ok()
                .and_then(|body| body["data"].as_array().cloned()),
            Err(_) => None,
        }
        .unwrap_or_default()
        .into_iter()
        .filter(|span| span["context"]["trace_id"] == trace)
        .collect();
        if spans.len() >= at_least {
            return spans;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Phoenix holds {} spans of trace {trace}, not {at_least}:\n{spans:#?}\n{}",
            spans.len(),
            phoenix.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn named<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    spans
        .iter()
        .find(|span| span["name"] == name)
        .unwrap_or_else(|| panic!("no span `{name}` in {spans:#?}"))
}

fn builder() -> RegistryBuilder {
    Registry::builder().roles(["public", "staff"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_a_real_backend_as_trees() {
    let phoenix = Phoenix::start(Path::new(env!("CARGO_TARGET_TMPDIR")));
    http_call_over_otlp_http(&phoenix).await;
    agent_run_over_otlp_grpc(&phoenix).await;
    secret_with_content_captured(&phoenix).await;
}

async fn http_call_over_otlp_http(phoenix: &Phoenix) {
    let telemetry = telemetry(phoenix, OtlpProtocol::HttpProtobuf, "weather-http");
    let registry = builder().telemetry(telemetry.clone()).build().unwrap();
    let auth = |_: &axum::http::request::Parts| -> Result<Caller, AuthError> {
        Ok(Caller::new("ada", "public"))
    };
    let app = router(registry, auth, HttpOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let answer = reqwest::Client::new()
        .post(format!("http://{address}/tools/call"))
        .header("traceparent", format!("00-{trace}-b7ad6b7169203331-01"))
        .json(&json!({"id": "w1", "name": "city_weather", "arguments": {"city": "Oslo"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    flush(&telemetry).await;

    let spans = trace_spans(phoenix, trace, 2).await;
    let server = named(&spans, "POST /tools/call");
    let call = named(&spans, "execute_tool city_weather");
    assert_eq!(server["parent_id"], "b7ad6b7169203331");
    assert_eq!(server["attributes"]["http.route"], "/tools/call");
    assert_eq!(server["attributes"]["http.response.status_code"], 200);
    assert_eq!(call["parent_id"], server["context"]["span_id"]);
    // Phoenix reads the GenAI conventions: a tool call is a TOOL span.
    assert_eq!(call["span_kind"], "TOOL");
    let attributes = &call["attributes"];
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["gen_ai.tool.call.id"], "w1");
    assert_eq!(attributes["toolgate.decision"], "allow");
    assert_eq!(attributes["toolgate.front"], "http");
    assert_eq!(attributes["gen_ai.tool.call.result"], "\"sunny in Oslo\"");
    telemetry.shutdown();
}

async fn agent_run_over_otlp_grpc(phoenix: &Phoenix) {
    use agent::{Ran, Scripted, calls, text};
    let telemetry = telemetry(phoenix, OtlpProtocol::Grpc, "clinic-agent");
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[
            ("c1", "lookup_pet", r#"{"name": "Rex"}"#),
            ("c2", "transfer", r#"{"amount": 5, "to": "vet"}"#),
            ("c3", "delete_everything", "{}"),
        ]),
        text("Rex's bill is paid."),
    ]);
    let registry = agent::builder(&ran)
        .telemetry(telemetry.clone())
        .approver("front-desk", |_request| async { ApprovalAnswer::Approve })
        .build()
        .unwrap();
    let run = Agent::builder(registry, model)
        .build()
        .run(&Caller::new("cust-1", "customer"), "Pay the vet for Rex")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Rex's bill is paid."));
    flush(&telemetry).await;

    // Find the run's trace by its root span's conversation id.
    let url = format!("{}/v1/projects/default/spans?limit=1000", phoenix.url);
    let started = Instant::now();
    let trace = loop {
        let body: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        let root = body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|span| span["attributes"]["gen_ai.conversation.id"] == run.id().as_str());
        if let Some(root) = root {
            break root["context"]["trace_id"].as_str().unwrap().to_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no run span:\n{}",
            phoenix.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let spans = trace_spans(phoenix, &trace, 6).await;
    let root = named(&spans, "invoke_agent toolgate");
    assert_eq!(root["parent_id"], Value::Null);
    let root_id = &root["context"]["span_id"];
    let children: Vec<&Value> = spans
        .iter()
        .filter(|span| &span["parent_id"] == root_id)
        .collect();
    let chats = children
        .iter()
        .filter(|span| span["name"] == "chat unknown")
        .count();
    assert_eq!(chats, 2, "{spans:#?}");
    let tool = |name: &str| named(&spans, &format!("execute_tool {name}"));
    for name in ["lookup_pet", "transfer", "delete_everything"] {
        assert_eq!(&tool(name)["parent_id"], root_id);
    }
    assert_eq!(tool("lookup_pet")["status_code"], "UNSET");
    assert_eq!(
        tool("transfer")["attributes"]["toolgate.approval.decided_by"],
        "front-desk"
    );
    assert_eq!(tool("delete_everything")["status_code"], "ERROR");
    assert_eq!(
        tool("delete_everything")["attributes"]["error.type"],
        "unknown_tool"
    );
    telemetry.shutdown();
}

async fn secret_with_content_captured(phoenix: &Phoenix) {
    let telemetry = telemetry(phoenix, OtlpProtocol::HttpProtobuf, "weather-secrets");
    let registry = builder().telemetry(telemetry.clone()).build().unwrap();
    let caller = Caller::new("ada", "public");
    let call = ToolCall::new("s1", "weather_login", json!({"password": SECRET}));
    assert!(registry.call(&caller, call).await.is_ok());
    flush(&telemetry).await;
    let url = format!("{}/v1/projects/default/spans?limit=1000", phoenix.url);
    let started = Instant::now();
    let everything = loop {
        let text = reqwest::get(&url).await.unwrap().text().await.unwrap();
        if text.contains("weather_login") {
            break text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no login span:\n{}",
            phoenix.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(!everything.contains(SECRET), "{everything}");
    assert!(
        everything.contains("signed in with [redacted]"),
        "{everything}"
    );
    telemetry.shutdown();
}
