//! A single call over HTTP writes its tool's result as text where it can (never made into a
//! JSON value), and a batch's calls, a tool that waits and the registry's own outcome go
//! through the value: the answer's text is the same either way, for results of every
//! shape, including those a value reorders, merges or holds otherwise.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use toolgate::audit::{AuditRecord, AuditSink};
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::prelude::*;
use tower::ServiceExt;

#[derive(Serialize, Clone)]
struct Visit {
    pet: String,
    day: u8,
    notes: Vec<String>,
    vet: Option<String>,
}

fn visit() -> Visit {
    Visit {
        pet: "Rex \"the dog\"".into(),
        day: 3,
        notes: vec!["é ✓".into(), "line\nbreak".into()],
        vet: None,
    }
}

/// A struct whose fields are not in the order of their names.
#[tool(permission = "staff", read_only)]
async fn unsorted() -> Visit {
    visit()
}

/// Nested structs and a map with several keys.
#[tool(permission = "staff", read_only)]
async fn nested() -> HashMap<String, Vec<Visit>> {
    HashMap::from([
        ("zeta".into(), vec![visit(), visit()]),
        ("alpha".into(), vec![]),
        ("mid".into(), vec![visit()]),
    ])
}

#[derive(Serialize)]
struct Merged {
    name: &'static str,
    #[serde(flatten)]
    extra: BTreeMap<&'static str, u32>,
}

/// A key given twice (a value keeps the last).
#[tool(permission = "staff", read_only)]
async fn merged() -> Merged {
    Merged {
        name: "first",
        extra: BTreeMap::from([("name", 2), ("a", 1)]),
    }
}

/// Numbers a value widens.
#[tool(permission = "staff", read_only)]
async fn narrow() -> Vec<f32> {
    vec![0.1, 1.5, -0.0]
}

/// Integer keys, which a value writes as text and sorts as text.
#[tool(permission = "staff", read_only)]
async fn by_number() -> BTreeMap<i64, &'static str> {
    BTreeMap::from([(9, "nine"), (10, "ten"), (-1, "minus one")])
}

/// An integer no JSON value holds.
#[tool(permission = "staff", read_only)]
async fn too_big() -> i128 {
    i128::MAX
}

/// The same result after a wait (its tool does not finish when first polled).
#[tool(permission = "staff", read_only)]
async fn unsorted_later() -> Visit {
    tokio::task::yield_now().await;
    visit()
}

/// What each tool's result is as a value, written: the text every path must give.
fn value_texts() -> Vec<(&'static str, Option<String>)> {
    // A value's text with its keys sorted, as toolgate answers in every build (serde_json's
    // `preserve_order`, turned on here by cedar-policy, would keep them as they came).
    let text = |value: serde_json::Result<Value>| {
        value.ok().map(|mut value| {
            value.sort_all_objects();
            value.to_string()
        })
    };
    vec![
        ("unsorted", text(serde_json::to_value(visit()))),
        ("unsorted_later", text(serde_json::to_value(visit()))),
        (
            "nested",
            text(serde_json::to_value(HashMap::from([
                ("zeta", vec![visit(), visit()]),
                ("alpha", vec![]),
                ("mid", vec![visit()]),
            ]))),
        ),
        ("merged", Some(r#"{"a":1,"name":2}"#.into())),
        (
            "narrow",
            text(serde_json::to_value(vec![0.1f32, 1.5, -0.0])),
        ),
        (
            "by_number",
            Some(r#"{"-1":"minus one","10":"ten","9":"nine"}"#.into()),
        ),
        ("too_big", None),
    ]
}

/// Counts the records it is given (an outcome then waits for its record to be written).
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl AuditSink for Counting {
    fn record(&self, _: &AuditRecord) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn app() -> axum::Router {
    app_of(Registry::builder().roles(["staff"]).build().unwrap())
}

fn app_of(registry: Registry) -> axum::Router {
    let authenticate = |_: &axum::http::request::Parts| -> Result<Caller, AuthError> {
        Ok(Caller::new("ana", "staff"))
    };
    router(registry, authenticate, HttpOptions::default())
}

async fn post(app: &axum::Router, body: Value) -> String {
    let request = Request::post("/tools/call")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// An outcome's result as it was written, or its error's code.
#[derive(Deserialize)]
struct Written<'a> {
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    error: Option<Value>,
}

fn result_text(outcome: &Written<'_>) -> Result<String, String> {
    match (&outcome.result, &outcome.error) {
        (Some(result), None) => Ok(result.get().to_owned()),
        (None, Some(error)) => Err(error["code"].as_str().unwrap().to_owned()),
        _ => panic!("an outcome has a result or an error"),
    }
}

#[tokio::test]
async fn a_single_calls_result_is_written_as_its_value_would_be_and_as_in_a_batch() {
    same_text_every_way(&app()).await;
}

#[tokio::test]
async fn the_same_holds_where_an_outcome_waits_for_its_record() {
    let sink = Counting::default();
    let registry = Registry::builder()
        .roles(["staff"])
        .audit_sink(sink.clone())
        .build()
        .unwrap();
    same_text_every_way(&app_of(registry)).await;
    // Every call, single or in a batch, was recorded.
    assert_eq!(sink.0.load(Ordering::Relaxed), 2 * value_texts().len());
}

async fn same_text_every_way(app: &axum::Router) {
    for (tool, expected) in value_texts() {
        let single = post(app, json!({"name": tool, "arguments": {}})).await;
        let single: Written<'_> = serde_json::from_str(&single).unwrap();
        let single = result_text(&single);

        let batch = post(app, json!({"calls": [{"name": tool, "arguments": {}}]})).await;
        let batch: BTreeMap<String, Vec<Written<'_>>> = serde_json::from_str(&batch).unwrap();
        let in_batch = result_text(&batch["outcomes"][0]);

        assert_eq!(
            single, in_batch,
            "{tool}: a single call and a batch's differ"
        );
        match expected {
            Some(expected) => assert_eq!(single, Ok(expected), "{tool}"),
            None => assert_eq!(single, Err("execution_failed".to_owned()), "{tool}"),
        }
    }
}

#[tokio::test]
async fn the_registrys_own_outcome_holds_the_same_value() {
    let registry = Registry::builder().roles(["staff"]).build().unwrap();
    let app = app();
    let caller = Caller::new("ana", "staff");
    for (tool, _) in value_texts() {
        let outcome = registry
            .call(&caller, ToolCall::new("1", tool, json!({})))
            .await;
        let written = post(&app, json!({"name": tool, "arguments": {}})).await;
        let written: Value = serde_json::from_str(&written).unwrap();
        match outcome.result {
            Ok(value) => assert_eq!(written["result"], value, "{tool}"),
            Err(error) => assert_eq!(written["error"]["code"], json!(error.code), "{tool}"),
        }
    }
}
