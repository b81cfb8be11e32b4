//! Two clinic processes on one PostgreSQL database (a real server the test starts on
//! 127.0.0.1): a ticket issued on one is approved on the other, once, even when fifty
//! redemptions race; one rate limit holds across both; ten thousand calls through both make
//! one verified audit chain; a process killed under load loses no acknowledged call's record;
//! a restarted one redeems tickets issued before.

mod clinic_process;

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use toolgate::audit::AuditStore;
use toolgate::store::postgres::PostgresStore;
use toolgate_test_support::TempPostgres;

use clinic_process::Clinic;

async fn post(http: &reqwest::Client, base: &str, path: &str, token: &str, body: Value) -> Value {
    let answer = http
        .post(format!("{base}{path}"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    answer.json().await.unwrap()
}

async fn ticket(http: &reqwest::Client, clinic: &Clinic, note: &str) -> String {
    let call = json!({"name": "update_medical_record", "arguments": {"pet_id": 1, "note": note}});
    let waiting = post(http, &clinic.base, "/tools/call", "staff-token", call).await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
    waiting["error"]["details"]["ticket"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn approve(http: &reqwest::Client, clinic: &Clinic, ticket: &str) -> Value {
    let body = json!({"ticket": ticket});
    post(
        http,
        &clinic.base,
        "/approvals/approve",
        "admin-token",
        body,
    )
    .await
}

async fn notes(http: &reqwest::Client, clinic: &Clinic) -> Vec<Value> {
    let call = json!({"name": "get_pet_records", "arguments": {"pet_id": 1}});
    let record = post(http, &clinic.base, "/tools/call", "staff-token", call).await;
    record["result"]["notes"].as_array().unwrap().clone()
}

async fn audited(store: &PostgresStore) -> u64 {
    store
        .verify()
        .await
        .unwrap()
        .expect("the chain verifies")
        .records
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clinics_on_one_postgres_share_approvals_limits_and_one_audit_chain() {
    let server = tokio::task::spawn_blocking(TempPostgres::start)
        .await
        .unwrap();
    let folder = tempfile::tempdir().unwrap();
    let database = server.new_database();
    let http = reqwest::Client::new();
    let a = Clinic::start(folder.path(), &database, 0);
    let b = Clinic::start(folder.path(), &database, 0);
    let store = PostgresStore::connect(&database).await.unwrap();

    // Issued on A, approved on B, once.
    let issued_on_a = ticket(&http, &a, "Approved on B.").await;
    let outcome = approve(&http, &b, &issued_on_a).await;
    assert_eq!(outcome["ok"], true, "{outcome}");
    let again = approve(&http, &a, &issued_on_a).await;
    assert_eq!(again["error"]["code"], "ticket_not_pending", "{again}");

    // Fifty redemptions of one ticket, spread over both: one runs.
    let raced = ticket(&http, &a, "Raced.").await;
    let attempts = (0..50).map(|index| {
        let clinic = if index % 2 == 0 { &a } else { &b };
        approve(&http, clinic, &raced)
    });
    let answers = futures::future::join_all(attempts).await;
    let ran = answers.iter().filter(|answer| answer["ok"] == true).count();
    assert_eq!(ran, 1, "{answers:?}");
    let raced_notes = notes(&http, &b).await;
    assert_eq!(
        raced_notes
            .iter()
            .filter(|note| note.as_str() == Some("Raced."))
            .count(),
        1
    );

    // Ten thousand calls spread over both: two records each (one before the tool runs, one
    // when the call ends: a shared audit store's default), one chain.
    let before = audited(&store).await;
    let calls = futures::stream::iter(0..10_000).map(|index| {
        let clinic = if index % 2 == 0 { &a } else { &b };
        let call = json!({"id": format!("load-{index}"), "name": "get_clinic_hours", "arguments": {"day": "monday"}});
        post(&http, &clinic.base, "/tools/call", "alice-token", call)
    });
    let answers: Vec<Value> = calls.buffer_unordered(32).collect().await;
    assert!(answers.iter().all(|answer| answer["ok"] == true));
    assert_eq!(audited(&store).await - before, 20_000);

    // A is killed under load: every call it acknowledged has its record.
    let waiting_on_a = ticket(&http, &a, "Approved after a restart.").await;
    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::new()));
    let load = {
        let (http, base, acknowledged) = (http.clone(), a.base.clone(), Arc::clone(&acknowledged));
        tokio::spawn(async move {
            let calls = futures::stream::iter(0..100_000).map(|index| {
                let (http, base) = (http.clone(), base.clone());
                async move {
                    let id = format!("kill-{index}");
                    let call = json!({"id": id, "name": "get_clinic_hours", "arguments": {"day": "friday"}});
                    let sent = http.post(format!("{base}/tools/call")).bearer_auth("alice-token").json(&call).send().await;
                    match sent {
                        Ok(answer) => answer.json::<Value>().await.ok().filter(|body| body["ok"] == true).map(|_| id),
                        Err(_) => None,
                    }
                }
            });
            let mut answers = calls.buffer_unordered(16);
            while let Some(answer) = answers.next().await {
                if let Some(id) = answer {
                    acknowledged.lock().unwrap().push(id);
                }
            }
        })
    };
    let under_load = async {
        while acknowledged.lock().unwrap().len() < 300 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(120), under_load)
        .await
        .expect("instance A answers calls under load");
    a.kill();
    load.await.unwrap();
    let acknowledged = acknowledged.lock().unwrap().clone();
    let recorded: std::collections::HashSet<String> = store
        .history("alice", 1_000_000)
        .await
        .unwrap()
        .into_iter()
        .map(|record| record.call_id)
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|id| !recorded.contains(*id))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged calls have no record: {lost:?}",
        lost.len()
    );
    audited(&store).await;

    // A, restarted, redeems the ticket it issued before it was killed.
    let restarted = Clinic::start(folder.path(), &database, 0);
    let outcome = approve(&http, &restarted, &waiting_on_a).await;
    assert_eq!(outcome["ok"], true, "{outcome}");

    // One budget per caller across both instances (a database of its own).
    let limited_database = server.new_database();
    let (c, d) = (
        Clinic::start(folder.path(), &limited_database, 10),
        Clinic::start(folder.path(), &limited_database, 10),
    );
    let mut allowed = 0;
    for index in 0..20 {
        let clinic = if index % 2 == 0 { &c } else { &d };
        let call = json!({"name": "get_clinic_hours", "arguments": {"day": "monday"}});
        let answer = post(&http, &clinic.base, "/tools/call", "alice-token", call).await;
        if answer["ok"] == true {
            allowed += 1;
        } else {
            assert_eq!(answer["error"]["code"], "rate_limited", "{answer}");
            assert!(
                answer["error"]["details"]["retry_after_ms"]
                    .as_u64()
                    .unwrap()
                    > 0
            );
        }
    }
    assert_eq!(allowed, 10);
    drop((b, restarted, c, d));
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}
