//! A single call sent in the usual shape, `{"name": ..., "arguments": {...}}`, has its
//! arguments read once, straight from the body, where its tool runs in place; every other
//! body, and every call the reader cannot take whole, is read the usual way. Whichever way a
//! body goes, the answer, the audit record and what the policy was shown are the same: each
//! body here is sent to a registry where the direct read is open and to one where it is
//! closed (each call is recorded before it runs, so every call is parsed and checked first).

use axum::body::Body;
use axum::http::{Request, header};
use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate::audit::AuditMode;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::prelude::*;
use toolgate_tests::RememberingPolicy;
use tower::ServiceExt;

/// Adds two numbers (runs in place).
#[tool(permission = "staff")]
async fn in_place_add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greets someone, some times (runs in place).
#[tool(permission = "staff")]
async fn in_place_greet(name: String, times: Option<u8>) -> String {
    name.repeat(usize::from(times.unwrap_or(1)))
}

/// Doubles a number (a synchronous tool: never run in place).
#[tool(permission = "staff")]
fn in_place_double(n: i64) -> i64 {
    n * 2
}

/// Above the caller's role: hidden, answered as an unknown tool.
#[tool(permission = "admin")]
async fn in_place_hidden(n: i64) -> i64 {
    n
}

struct Side {
    app: axum::Router,
    registry: Registry,
    policy: RememberingPolicy,
}

/// A side with the direct read open, or closed by recording each call before it runs.
fn side(closed: bool) -> Side {
    let policy = RememberingPolicy::default();
    let mode = match closed {
        true => AuditMode::BeforeRun,
        false => AuditMode::AfterCall,
    };
    let registry = Registry::builder()
        .roles(["staff", "admin"])
        .filter_linked(|tool| tool.name.starts_with("in_place_"))
        .policy(policy.clone())
        .audit_mode(mode)
        .build()
        .unwrap();
    let authenticate = |_: &axum::http::request::Parts| -> Result<Caller, AuthError> {
        Ok(Caller::new("ana", "staff"))
    };
    let app = router(registry.clone(), authenticate, HttpOptions::default());
    Side {
        app,
        registry,
        policy,
    }
}

/// The answer to `body` (its duration left out), the records it left and the arguments the
/// policy was shown, call by call.
async fn observe(side: &Side, body: &str) -> (u16, Value, Vec<Value>, Vec<Value>) {
    let request = Request::post("/tools/call")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let response = side.app.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let mut answer: Value = serde_json::from_slice(&bytes).unwrap();
    without_durations(&mut answer);
    let mut given = Vec::new();
    given_ids(&mut answer, &mut given);
    let records = side.registry.history("ana", 100).await.unwrap();
    // The closed side's records written before each run ("started") are its own.
    let records = records
        .iter()
        .filter(|record| record.outcome != "started")
        .map(|record| {
            // An id given to a call sent without one is the answer's and the record's alike.
            let call_id = match given.contains(&record.call_id) {
                true => "call-<given>",
                false if generated(&record.call_id) => "call-<given earlier>",
                false => record.call_id.as_str(),
            };
            json!({
                "tool": record.tool,
                "call_id": call_id,
                "arguments": record.arguments,
                "decision": record.decision,
                "outcome": record.outcome,
            })
        })
        .collect();
    let asked = std::mem::take(&mut *side.policy.seen.lock().unwrap());
    (status, answer, records, asked)
}

/// The ids the router gave calls sent without one, anywhere in `answer`, each then written
/// `call-<given>` (the same call's record says the same id).
fn given_ids(answer: &mut Value, given: &mut Vec<String>) {
    match answer {
        Value::Object(fields) => {
            for (key, value) in fields.iter_mut() {
                match value.as_str() {
                    Some(id) if key == "call_id" && generated(id) => {
                        given.push(id.to_owned());
                        *value = json!("call-<given>");
                    }
                    _ => given_ids(value, given),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| given_ids(item, given)),
        _ => {}
    }
}

/// Whether `id` is one the router gave a call sent without one (`call-<8 hex>-<n>`).
fn generated(id: &str) -> bool {
    let Some((process, count)) = id
        .strip_prefix("call-")
        .and_then(|rest| rest.split_once('-'))
    else {
        return false;
    };
    process.len() == 8
        && process.chars().all(|c| c.is_ascii_hexdigit())
        && count.chars().all(|c| c.is_ascii_digit())
}

/// `answer` without the calls' durations (a single outcome's, or a batch's).
fn without_durations(answer: &mut Value) {
    if let Some(outcome) = answer.as_object_mut() {
        outcome.remove("duration_ms");
    }
    if let Some(Value::Array(outcomes)) = answer.get_mut("outcomes") {
        outcomes.iter_mut().for_each(without_durations);
    }
}

/// Sends `body` to both sides: the same answer, the same records, the policy asked as
/// often and shown the same arguments (a call given up before it was decided is not
/// decided twice).
async fn same_both_ways(direct: &Side, checked: &Side, body: &str) {
    let seen_direct = observe(direct, body).await;
    let seen_checked = observe(checked, body).await;
    assert_eq!(seen_direct, seen_checked, "{body}");
}

const BODIES: &[&str] = &[
    r#"{"name": "in_place_add", "arguments": {"a": 20, "b": 22}}"#,
    r#"{"name":"in_place_add","arguments":{"a":1,"b":2}}"#,
    " \n{\t\"name\" :\r\"in_place_add\" ,\"arguments\"\n:\n{\"b\": 2, \"a\": 1}\n}\n ",
    r#"{"name": "in_place_add", "arguments": {"a": 1}}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": "2"}}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2, "c": 3}}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "a": 2, "b": 3}}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1.0, "b": 2}}"#,
    r#"{"name": "in_place_add", "arguments": [1, 2]}"#,
    r#"{"name": "in_place_add", "arguments": "{\"a\": 1, \"b\": 2}"}"#,
    r#"{"name": "in_place_add", "arguments": null}"#,
    r#"{"name": "in_place_add", "arguments": {}}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2}, "id": "seven"}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2}, "dry_run": true}"#,
    r#"{"id": 7, "name": "in_place_add", "arguments": {"a": 1, "b": 2}}"#,
    r#"{"arguments": {"a": 1, "b": 2}, "name": "in_place_add"}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2}}}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2}} x"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2}, "name": "in_place_double"}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2},}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1} , "b": 2}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": {"c": 2}}}"#,
    r#"{"name": "in_place_\u0061dd", "arguments": {"a": 1, "b": 2}}"#,
    r#"{"n\u0061me": "in_place_add", "arguments": {"a": 1, "b": 2}}"#,
    r#"{"name": "in_place_greet", "arguments": {"name": "Rex \"}\" {", "times": 2}}"#,
    r#"{"name": "in_place_greet", "arguments": {"name": "é\u00e9", "times": null}}"#,
    r#"{"name": "in_place_greet", "arguments": {"name": "x", "times": 256}}"#,
    r#"{"name": "in_place_double", "arguments": {"n": 21}}"#,
    r#"{"name": "in_place_hidden", "arguments": {"n": 1}}"#,
    r#"{"name": "nowhere", "arguments": {"n": 1}}"#,
    r#"{"name": "", "arguments": {}}"#,
    r#"{"name": "in_place_add"}"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2}, "calls": []}"#,
    r#"{"calls": [{"name": "in_place_add", "arguments": {"a": 1, "b": 2}}]}"#,
    r#"[{"name": "in_place_add", "arguments": {"a": 1, "b": 2}}]"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2"#,
    r#"{"name": "in_place_add", "arguments": }"#,
    r#"{"name": "in_place_add", "arguments": {"a": 1, "b": 2} "#,
    "",
    "{}",
];

#[tokio::test]
async fn usual_bodies_and_every_other_kind_are_answered_alike_both_ways() {
    let (direct, checked) = (side(false), side(true));
    for body in BODIES {
        same_both_ways(&direct, &checked, body).await;
    }
}

#[tokio::test]
async fn the_usual_call_is_answered_from_its_arguments_read_once() {
    let direct = side(false);
    let body = r#"{"name": "in_place_add", "arguments": {"a": 20, "b": 22}}"#;
    let (status, answer, records, asked) = observe(&direct, body).await;
    assert_eq!(status, 200);
    assert_eq!(
        answer,
        json!({"call_id": "call-<given>", "tool": "in_place_add", "ok": true, "result": 42})
    );
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["arguments"], json!({"a": 20, "b": 22}));
    assert_eq!(asked, [json!({"a": 20, "b": 22})]);
}

/// A body in the usual shape, or one step from it, with JSON's whitespace anywhere.
fn body() -> impl Strategy<Value = String> {
    let space = prop::sample::select(vec!["", " ", "\n", "\t ", "\r\n"]);
    let name = prop::sample::select(vec![
        "in_place_add",
        "in_place_greet",
        "in_place_double",
        "in_place_hidden",
        "nowhere",
        "in_place_\\u0061dd",
    ]);
    let arguments = prop::sample::select(vec![
        r#"{"a": 1, "b": 2}"#,
        r#"{"b":-5,"a":9223372036854775807}"#,
        r#"{"a": 1}"#,
        r#"{"a": 1, "b": 2, "b": 3}"#,
        r#"{"a": "1", "b": 2}"#,
        r#"{"name": "Rex}", "times": 3}"#,
        r#"{"name": "\"", "times": null}"#,
        r#"{"n": 4}"#,
        r#"[1, 2]"#,
        r#"{}"#,
        r#"{"a": 1, "b": 2"#,
        r#"{"a": 1, "b": 2}}"#,
    ]);
    let after = prop::sample::select(vec!["", r#", "id": "x""#, r#", "dry_run": true"#, ",", "}"]);
    (prop::collection::vec(space, 9), name, arguments, after).prop_map(
        |(s, name, arguments, after)| {
            format!(
                r#"{}{{{}"name"{}:{}"{name}"{},{}"arguments":{}{arguments}{after}{}}}{}"#,
                s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_body_near_the_usual_shape_is_answered_alike_both_ways(body in body()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (direct, checked) = (side(false), side(true));
            same_both_ways(&direct, &checked, &body).await;
        });
    }
}
