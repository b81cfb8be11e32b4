//! `POST /chat` on the clinic: a model (a scripted OpenAI-compatible server on loopback)
//! asks for a change that needs approval; an admin approves it through the approval routes,
//! the staff member's run goes on, and `GET /events` showed it all as it happened.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use futures::StreamExt;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::agent::models::OpenAiChat;
use toolgate_examples::clinic::open_app_with;

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// An OpenAI-compatible server answering from a script.
async fn scripted_model(replies: Vec<Value>) -> String {
    let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
    let app =
        axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move |Json(_): Json<Value>| {
                let reply = replies.lock().unwrap().pop_front();
                async move {
                    Json(reply.unwrap_or_else(|| json!({"error": {"message": "script ended"}})))
                }
            }),
        );
    serve(app).await
}

fn completion(message: Value) -> Value {
    json!({"choices": [{"index": 0, "message": message}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
}

async fn post(client: &Client, url: String, token: &str, body: Value) -> (StatusCode, Value) {
    let response = client
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_chat_waits_for_an_admins_approval_and_goes_on_when_its_owner_resumes() {
    let model = scripted_model(vec![
        completion(json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_note", "type": "function",
            "function": {"name": "update_medical_record", "arguments": "{\"pet_id\": 1, \"note\": \"Lost 2 kg.\"}"}
        }]})),
        completion(json!({"role": "assistant", "content": "The note is in Rex's record."})),
    ])
    .await;
    let directory = TempDir::new().unwrap();
    let app = open_app_with(
        &directory.path().join("clinic.db"),
        OpenAiChat::new(format!("{model}/v1"), "scripted"),
    )
    .unwrap();
    let base = serve(app).await;
    let client = Client::new();

    // The admin watches the events it may act on.
    let events = client
        .get(format!("{base}/events"))
        .bearer_auth("admin-token")
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    let mut events = events.bytes_stream();

    let (status, run) = post(
        &client,
        format!("{base}/chat"),
        "staff-token",
        json!({"message": "Rex lost 2 kg, note it."}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["status"]["status"], "needs_approval", "{run}");
    let pending = &run["pending"][0];
    assert_eq!(pending["tool"], "update_medical_record");
    let ticket = pending["ticket"].as_str().unwrap().to_owned();
    let run_id = run["run_id"].as_str().unwrap().to_owned();

    // The admin saw the approval request arrive.
    let mut seen = String::new();
    while !seen.contains("event: approval_requested") {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(30), events.next())
            .await
            .expect("an event arrives")
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("update_medical_record"));
    assert!(seen.contains(&run_id), "events carry the run id");

    // Someone else does not see the run; its owner cannot approve it.
    let (status, _) = post(
        &client,
        format!("{base}/chat/{run_id}/resume"),
        "alice-token",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let decisions = json!({"decisions": [{"call_id": "call_note", "decision": "approve"}]});
    let (status, refused) = post(
        &client,
        format!("{base}/chat/{run_id}/resume"),
        "staff-token",
        decisions,
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");

    // The admin decides on the run's own route: it learns what came of its decision, never
    // the conversation; the owner goes on.
    let (status, decided) = post(
        &client,
        format!("{base}/chat/{run_id}/resume"),
        "admin-token",
        json!({"decisions": [{"call_id": "call_note", "decision": "approve"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{decided}");
    assert_eq!(decided["status"], "decided", "{decided}");
    assert_eq!(decided["outcomes"][0]["call_id"], "call_note");
    assert_eq!(decided["outcomes"][0]["ok"], true, "{decided}");
    for private in ["text", "calls", "transcript", "pending", "usage"] {
        assert!(
            decided.get(private).is_none(),
            "{private} leaked: {decided}"
        );
    }
    // Its ticket is spent: the approval routes cannot run the call again.
    let (status, again) = post(
        &client,
        format!("{base}/approvals/approve"),
        "admin-token",
        json!({"ticket": ticket}),
    )
    .await;
    assert_ne!(status, StatusCode::OK, "{again}");
    let (status, run) = post(
        &client,
        format!("{base}/chat/{run_id}/resume"),
        "staff-token",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["status"]["status"], "finished");
    assert_eq!(run["text"], "The note is in Rex's record.");
    assert_eq!(run["calls"][0]["tool"], "update_medical_record");

    let shown = client
        .get(format!("{base}/chat/{run_id}"))
        .bearer_auth("staff-token")
        .send()
        .await
        .unwrap();
    assert_eq!(shown.status(), StatusCode::OK);
    let malformed = client
        .post(format!("{base}/chat"))
        .bearer_auth("staff-token")
        .header("content-type", "application/json")
        .body("{\"msg\": 1}")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn without_a_model_server_a_chat_ends_with_a_clear_status() {
    let directory = TempDir::new().unwrap();
    let app = open_app_with(
        &directory.path().join("clinic.db"),
        OpenAiChat::new("http://127.0.0.1:9/v1", "none"),
    )
    .unwrap();
    let base = serve(app).await;
    let (status, run) = post(
        &Client::new(),
        format!("{base}/chat"),
        "alice-token",
        json!({"message": "hi"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(run["status"]["status"], "model_failed");
    assert_eq!(run["status"]["error"]["kind"], "connect");
}
