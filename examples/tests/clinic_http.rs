//! The clinic backend over real HTTP on 127.0.0.1: roles, ownership, approvals, bad
//! requests, and 200 concurrent batches.

use std::net::SocketAddr;

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate_examples::clinic::open_app;

struct Server {
    base: String,
    client: Client,
    _directory: TempDir,
}

/// Starts the clinic on a free loopback port with a fresh database.
async fn start() -> Server {
    let directory = TempDir::new().unwrap();
    let app = open_app(&directory.path().join("clinic.db")).unwrap();
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server {
        base,
        client: Client::new(),
        _directory: directory,
    }
}

impl Server {
    /// A pet's notes, as staff read them.
    async fn pet_notes(&self, pet_id: u64) -> Value {
        let record = self
            .call(
                Some("staff-token"),
                "get_pet_records",
                json!({"pet_id": pet_id}),
            )
            .await;
        record["result"]["notes"].clone()
    }

    /// Sends a request with an optional bearer token: the status, the content type, the JSON.
    async fn send(
        request: reqwest::RequestBuilder,
        token: Option<&str>,
    ) -> (StatusCode, Option<String>, Value) {
        let request = match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        let response = request.send().await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned());
        (status, content_type, response.json().await.unwrap())
    }

    async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        let (status, _, body) =
            Self::send(self.client.get(format!("{}{path}", self.base)), token).await;
        (status, body)
    }

    async fn post(
        &self,
        path: &str,
        token: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> (StatusCode, Value) {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body);
        let (status, content_type, body) = Self::send(request, token).await;
        assert_eq!(
            content_type.as_deref(),
            Some("application/json"),
            "every answer is JSON ({status})"
        );
        (status, body)
    }

    async fn call(&self, token: Option<&str>, name: &str, arguments: Value) -> Value {
        let (status, body) = self
            .post(
                "/tools/call",
                token,
                json!({"id": "c1", "name": name, "arguments": arguments}).to_string(),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    async fn tool_names(&self, token: Option<&str>) -> Vec<String> {
        let (status, body) = self.get("/tools", token).await;
        assert_eq!(status, StatusCode::OK);
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

#[tokio::test]
async fn each_role_sees_exactly_its_tools() {
    let server = start().await;
    assert_eq!(
        server.tool_names(None).await,
        ["get_clinic_hours", "list_services"]
    );
    assert_eq!(
        server.tool_names(Some("alice-token")).await,
        [
            "book_appointment",
            "get_clinic_hours",
            "get_pet_records",
            "list_services"
        ]
    );
    assert_eq!(
        server.tool_names(Some("staff-token")).await,
        [
            "book_appointment",
            "get_clinic_hours",
            "get_pet_records",
            "list_appointments",
            "list_services",
            "refund_payment",
            "update_medical_record"
        ]
    );
    // The contractor is staff, but sees no billing tool (a rule of clinic.cedar).
    let contractor = server.tool_names(Some("temp-token")).await;
    assert!(!contractor.contains(&"refund_payment".to_owned()));
    assert_eq!(contractor.len(), 6);
    assert_eq!(server.tool_names(Some("admin-token")).await.len(), 9);
    let (status, body) = server
        .get("/tools?format=openai", Some("alice-token"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["tools"][0]["type"], "function");
    let (_, body) = server.get("/tools?format=mcp", None).await;
    assert_eq!(body["tools"][0]["annotations"]["readOnlyHint"], true);
}

#[tokio::test]
async fn customers_cannot_reach_staff_tools_or_other_customers_pets() {
    let server = start().await;
    let staff_tool = server
        .call(Some("alice-token"), "list_appointments", json!({}))
        .await;
    assert_eq!(staff_tool["error"]["code"], "unknown_tool");
    // Answered like a name that does not exist: what it suggests and lists are tools the
    // customer may use (tests/tests/roles.rs checks the very same answer).
    let message = staff_tool["error"]["message"].as_str().unwrap();
    let (_, body) = server.get("/tools", Some("alice-token")).await;
    let visible: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    let named: Vec<&str> = message.split('`').skip(3).step_by(2).collect();
    assert!(!named.is_empty(), "{message}");
    assert!(named.iter().all(|name| visible.contains(name)), "{message}");
    let own = server
        .call(Some("alice-token"), "get_pet_records", json!({"pet_id": 1}))
        .await;
    assert_eq!(own["result"]["name"], "Rex");
    let others = server
        .call(Some("alice-token"), "get_pet_records", json!({"pet_id": 3}))
        .await;
    assert_eq!(others["error"]["code"], "not_found");
    let booking = server
        .call(
            Some("alice-token"),
            "book_appointment",
            json!({"pet_id": 3, "day": "monday", "reason": "checkup"}),
        )
        .await;
    assert_eq!(booking["error"]["code"], "not_found");
    let booked = server
        .call(
            Some("bob-token"),
            "book_appointment",
            json!({"pet_id": 3, "day": "monday", "reason": "checkup"}),
        )
        .await;
    assert_eq!(booked["ok"], true, "{booked}");
    let staff = server
        .call(
            Some("staff-token"),
            "list_appointments",
            json!({"day": "monday"}),
        )
        .await;
    assert_eq!(staff["result"][0]["pet"], "Bello");
}

#[tokio::test]
async fn approval_flow_end_to_end() {
    let server = start().await;
    let waiting = server
        .call(
            Some("staff-token"),
            "update_medical_record",
            json!({"pet_id": 1, "note": "Lost 2 kg."}),
        )
        .await;
    assert_eq!(waiting["error"]["code"], "approval_required");
    let ticket = waiting["error"]["details"]["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    // Not yet in the record.
    assert_eq!(
        server.pet_notes(1).await,
        json!(["Vaccinated against rabies."])
    );

    // Staff may not approve: they see no pending call, and the ticket is not theirs to use.
    let (status, body) = server.get("/approvals", Some("staff-token")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["pending"], json!([]));
    let (status, body) = server
        .post(
            "/approvals/approve",
            Some("staff-token"),
            json!({ "ticket": ticket }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"]["code"], "ticket_not_pending");
    let (status, body) = server.get("/approvals", Some("admin-token")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["pending"][0]["tool"], "update_medical_record");
    assert_eq!(body["pending"][0]["caller"], "dr-lee");

    let approval = json!({ "ticket": ticket }).to_string();
    let (status, outcome) = server
        .post("/approvals/approve", Some("admin-token"), approval.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{outcome}");
    assert_eq!(outcome["ok"], true);
    assert_eq!(
        server.pet_notes(1).await,
        json!(["Vaccinated against rabies.", "Lost 2 kg."])
    );

    let (status, again) = server
        .post("/approvals/approve", Some("admin-token"), approval)
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["error"]["code"], "ticket_not_pending");
    let (status, forged) = server
        .post(
            "/approvals/approve",
            Some("admin-token"),
            json!({"ticket": "abc.def"}).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(forged["error"]["code"], "invalid_ticket");

    // Denying another one.
    let waiting = server
        .call(
            Some("staff-token"),
            "update_medical_record",
            json!({"pet_id": 2, "note": "x"}),
        )
        .await;
    let ticket = waiting["error"]["details"]["ticket"].as_str().unwrap();
    let (status, denied) = server
        .post(
            "/approvals/deny",
            Some("admin-token"),
            json!({"ticket": ticket, "reason": "wrong pet"}).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(denied["error"]["code"], "approval_denied");
}

#[tokio::test]
async fn bad_requests_get_json_errors() {
    let server = start().await;
    let (status, body) = server.post("/tools/call", None, "{not json").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("malformed_body"))
    );
    let (status, body) = server
        .post("/tools/call", None, r#"{"arguments": {}}"#)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the call has no string `name`")
    );
    let (status, body) = server
        .post(
            "/tools/call",
            None,
            r#"{"calls": [{"name": "list_services"}, {"nom": 1}]}"#,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("calls[1] has no string `name`")
    );
    let (status, body) = server
        .post("/tools/call", None, "x".repeat(2 * 1024 * 1024))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("body_too_large"))
    );
    let (status, body) = server.get("/tools?format=cobol", None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("unknown_format"))
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("openai-strict")
    );
    let (status, body) = server.get("/tools", Some("stolen-token")).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthenticated"))
    );
    let (status, body) = server.get("/nowhere", None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, body) = server.post("/tools", None, "").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed"))
    );
    // Deeply nested JSON is refused, not a crash.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, _) = server.post("/tools/call", None, deep).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // The server is still serving.
    let (status, body) = server.get("/health", None).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_batches_are_all_answered_correctly() {
    let server = start().await;
    let requests = (0..200).map(|n| {
        let server = &server;
        async move {
            let token = if n % 2 == 0 { "alice-token" } else { "bob-token" };
            let pet = if n % 2 == 0 { 1 } else { 3 };
            let body = json!({"calls": [
                {"id": format!("{n}-a"), "name": "get_clinic_hours", "arguments": {"day": "saturday"}},
                {"id": format!("{n}-b"), "name": "get_pet_records", "arguments": {"pet_id": pet}},
                {"id": format!("{n}-c"), "name": "get_pet_records", "arguments": {"pet_id": 2}},
                {"id": format!("{n}-d"), "name": "list_services", "arguments": {}}
            ]});
            let (status, answer) = server.post("/tools/call", Some(token), body.to_string()).await;
            (n, status, answer)
        }
    });
    let answers = futures::future::join_all(requests).await;
    assert_eq!(answers.len(), 200);
    for (n, status, answer) in answers {
        assert_eq!(status, StatusCode::OK);
        let outcomes = answer["outcomes"].as_array().unwrap();
        let ids: Vec<&str> = outcomes
            .iter()
            .map(|o| o["call_id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            [
                format!("{n}-a"),
                format!("{n}-b"),
                format!("{n}-c"),
                format!("{n}-d")
            ]
        );
        assert_eq!(outcomes[0]["result"][0]["hours"], "09:00-13:00");
        assert_eq!(outcomes[1]["ok"], true, "{answer}");
        let alice = n % 2 == 0;
        assert_eq!(outcomes[2]["ok"], alice, "pet 2 is alice's: {answer}");
        assert_eq!(outcomes[3]["result"].as_array().unwrap().len(), 4);
    }
}

/// A single call sent as a dry run says what would happen, and nothing happens: the tool
/// does not run and no approval waits.
#[tokio::test]
async fn a_single_call_sent_as_a_dry_run_runs_nothing() {
    let server = start().await;
    let dry = json!({
        "id": "d1",
        "name": "update_medical_record",
        "arguments": {"pet_id": 1, "note": "Lost 2 kg."},
        "dry_run": true,
    });
    let (status, outcome) = server
        .post("/tools/call", Some("staff-token"), dry.to_string())
        .await;
    assert_eq!(status, StatusCode::OK, "{outcome}");
    assert_eq!(outcome["call_id"], "d1");
    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(outcome["result"]["dry_run"], true, "{outcome}");
    assert_eq!(outcome["result"]["decision"], "require_approval");
    let (status, pending) = server.get("/approvals", Some("admin-token")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        pending["pending"],
        json!([]),
        "a dry run leaves nothing to approve"
    );
    assert_eq!(
        server.pet_notes(1).await,
        json!(["Vaccinated against rabies."])
    );
}

#[tokio::test]
async fn bodies_that_are_not_declared_json_are_refused_so_no_site_can_forge_them() {
    let server = start().await;
    let call = json!({"id": "c1", "name": "list_services", "arguments": {}}).to_string();
    for path in ["/tools/call", "/approvals/approve", "/approvals/deny"] {
        for content_type in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            None,
        ] {
            let mut request = server
                .client
                .post(format!("{}{path}", server.base))
                .bearer_auth("admin-token")
                .body(call.clone());
            if let Some(content_type) = content_type {
                request = request.header("content-type", content_type);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{path} {content_type:?}"
            );
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"]["code"], "unsupported_media_type");
        }
        // Who is calling is settled first: a stranger learns nothing about the body.
        let response = server
            .client
            .post(format!("{}{path}", server.base))
            .bearer_auth("stolen-token")
            .header("content-type", "text/plain")
            .body(call.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    let response = server
        .client
        .post(format!("{}/tools/call", server.base))
        .header("content-type", "application/json; charset=utf-8")
        .body(call)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn health_tells_each_caller_only_about_its_own_tools() {
    let server = start().await;
    let (_, anonymous) = server.get("/health", None).await;
    let (_, admin) = server.get("/health", Some("admin-token")).await;
    let public_tools = server.tool_names(None).await.len();
    let admin_tools = server.tool_names(Some("admin-token")).await.len();
    assert!(admin_tools > public_tools);
    assert_eq!(anonymous["tools"], public_tools);
    assert_eq!(admin["tools"], admin_tools);
    let (status, refused) = server.get("/health", Some("no-such-token")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(refused, json!({"status": "ok"}));
}

#[tokio::test]
async fn the_format_query_is_percent_decoded() {
    let server = start().await;
    let (status, body) = server.get("/tools?format=openai%2Dstrict", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["tools"][0]["type"], "function");
}
