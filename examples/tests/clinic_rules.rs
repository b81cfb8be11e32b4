//! The clinic's rules (`examples/src/clinic/clinic.cedar`) over HTTP: refunds over 100
//! euros wait for an admin, a contractor sees no billing tool, destructive tools run only
//! in opening hours on the clinic's clock.

use std::net::SocketAddr;

use reqwest::Client;
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate_examples::clinic::{SharedState, open_app_sharing};
use toolgate_test_support::utc_offset_for_hour;

struct Clinic {
    base: String,
    client: Client,
    _directory: TempDir,
}

/// The clinic, its clock at `hour`.
async fn clinic_at(hour: i64) -> Clinic {
    let directory = TempDir::new().unwrap();
    let shared = SharedState {
        utc_offset_minutes: utc_offset_for_hour(hour),
        ..SharedState::default()
    };
    let model = toolgate_examples::clinic::model_from_env();
    let app = open_app_sharing(&directory.path().join("clinic.db"), model, shared).unwrap();
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Clinic {
        base,
        client: Client::new(),
        _directory: directory,
    }
}

impl Clinic {
    async fn call(&self, token: &str, tool: &str, arguments: Value) -> Value {
        self.post(
            token,
            "/tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    async fn post(&self, token: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let response = self
            .client
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        response.json().await.unwrap()
    }

    async fn tools(&self, token: &str) -> Vec<String> {
        let url = format!("{}/tools", self.base);
        let listed: Value = self
            .client
            .get(url)
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let tools = listed["tools"].as_array().unwrap();
        tools
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

#[tokio::test]
async fn refunds_over_100_euros_wait_for_an_admin() {
    let clinic = clinic_at(12).await;
    let small = clinic
        .call(
            "staff-token",
            "refund_payment",
            json!({"pet_id": 3, "amount_eur": 40, "reason": "Overcharged."}),
        )
        .await;
    assert_eq!(small["result"]["refunded_eur"], 40, "{small}");
    let large = clinic
        .call(
            "staff-token",
            "refund_payment",
            json!({"pet_id": 3, "amount_eur": 150, "reason": "Cancelled."}),
        )
        .await;
    assert_eq!(large["error"]["code"], "approval_required", "{large}");
    let message = large["error"]["message"].as_str().unwrap();
    assert!(message.contains("approved by an admin"), "{message}");
    let ticket = large["error"]["details"]["ticket"].as_str().unwrap();
    let approved = clinic
        .post(
            "admin-token",
            "/approvals/approve",
            json!({"ticket": ticket}),
        )
        .await;
    assert_eq!(approved["result"]["refunded_eur"], 150, "{approved}");
}

#[tokio::test]
async fn a_contractor_sees_no_billing_tool() {
    let clinic = clinic_at(12).await;
    assert!(
        clinic
            .tools("staff-token")
            .await
            .contains(&"refund_payment".to_owned())
    );
    let seen = clinic.tools("temp-token").await;
    assert!(!seen.contains(&"refund_payment".to_owned()), "{seen:?}");
    assert!(
        seen.contains(&"list_appointments".to_owned()),
        "still staff: {seen:?}"
    );
    let refused = clinic
        .call(
            "temp-token",
            "refund_payment",
            json!({"pet_id": 3, "amount_eur": 5, "reason": "x"}),
        )
        .await;
    assert_eq!(refused["error"]["code"], "unknown_tool", "{refused}");
}

#[tokio::test]
async fn destructive_tools_run_only_in_opening_hours() {
    let night = clinic_at(22).await;
    let refused = night
        .call("admin-token", "delete_pet", json!({"pet_id": 2}))
        .await;
    assert_eq!(refused["error"]["code"], "denied", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("08:00 to 18:00")
    );
    // In opening hours the rules let it on; a critical tool still waits for a person.
    let day = clinic_at(10).await;
    let waiting = day
        .call("admin-token", "delete_pet", json!({"pet_id": 2}))
        .await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
}
