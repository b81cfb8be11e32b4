//! The PostgreSQL store, against a real server the test starts on 127.0.0.1: instances
//! (each with its own pool of connections) share approvals, grants, budgets and one audit
//! chain; a restart loses nothing; an unreachable server is a clear error.

mod store_suite;

use std::sync::Arc;

use std::time::Duration;

use serde_json::json;
use store_suite::{Count, Open, Tamper};
use toolgate::ToolCall;
use toolgate::events::EventKind;
use toolgate::store::StoreError;
use toolgate::store::postgres::PostgresStore;
use toolgate_test_support::TempPostgres;

fn opener(url: &str) -> Open {
    let url = url.to_owned();
    Arc::new(move || {
        let url = url.clone();
        Box::pin(async move { PostgresStore::connect(&url).await.unwrap().stores() })
    })
}

/// A connection behind the stores' back.
async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

fn tamperer(url: &str) -> Tamper {
    let url = url.to_owned();
    Arc::new(move |sql: &'static str| {
        let url = url.clone();
        Box::pin(async move {
            connect(&url).await.batch_execute(sql).await.unwrap();
        })
    })
}

fn counter(url: &str) -> Count {
    let url = url.to_owned();
    Arc::new(move |sql: &'static str| {
        let url = url.clone();
        Box::pin(async move {
            connect(&url)
                .await
                .query_one(sql, &[])
                .await
                .unwrap()
                .get(0)
        })
    })
}

/// Runs a scenario in a new database on a server of its own.
async fn scenario<Fut: std::future::Future<Output = ()>>(run: impl FnOnce(String) -> Fut) {
    let server = tokio::task::spawn_blocking(TempPostgres::start)
        .await
        .unwrap();
    run(server.new_database()).await;
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tickets_survive_a_restart_and_redeem_once() {
    scenario(async |url| {
        store_suite::tickets_survive_a_restart_and_redeem_once(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_calls_are_refused_and_cleaned_up() {
    scenario(async |url| {
        store_suite::expired_calls_are_refused_and_cleaned_up(opener(&url), counter(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_redemptions_across_instances_run_once() {
    scenario(async |url| {
        store_suite::concurrent_redemptions_across_instances_run_once(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_survive_a_restart() {
    scenario(async |url| {
        store_suite::grants_survive_a_restart(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_rate_limit_across_instances() {
    scenario(async |url| {
        store_suite::one_rate_limit_across_instances(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_chain_holds_across_instances() {
    scenario(async |url| {
        store_suite::the_audit_chain_holds_across_instances(opener(&url), 2000).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampering_with_the_audit_chain_is_detected() {
    scenario(async |url| {
        store_suite::tampering_with_the_audit_chain_is_detected(opener(&url), tamperer(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused_and_two_instances_migrate_once() {
    scenario(async |url| {
        // Two instances starting together on an empty database: one migrates, both open.
        let (a, b) = tokio::join!(PostgresStore::connect(&url), PostgresStore::connect(&url));
        a.unwrap();
        b.unwrap();
        let reopened = async {
            PostgresStore::connect(&url)
                .await
                .map(|store| store.stores())
        };
        store_suite::a_newer_schema_is_refused(reopened, tamperer(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_a_clear_error() {
    let server = tokio::task::spawn_blocking(TempPostgres::start)
        .await
        .unwrap();
    let url = server.url("postgres");
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
    let error = PostgresStore::connect(&url).await.unwrap_err();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("PostgreSQL (127.0.0.1:"), "{message}");
    assert!(message.to_lowercase().contains("connect"), "{message}");
    let bad = PostgresStore::connect("postgres://[not-an-address")
        .await
        .unwrap_err();
    assert!(matches!(bad, StoreError::BadAddress(_)), "{bad:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_each_call_is_recorded_before_it_runs() {
    scenario(async |url| {
        store_suite::by_default_each_call_is_recorded_before_it_runs(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_id_no_store_can_keep_is_refused_and_recorded() {
    scenario(async |url| {
        store_suite::a_caller_id_no_store_can_keep_is_refused_and_recorded(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_shared_by_instances_and_taken_once() {
    scenario(async |url| {
        store_suite::sessions_are_shared_by_instances_and_taken_once(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_one_database_is_migrated() {
    scenario(async |url| {
        store_suite::a_version_one_database_is_migrated(opener(&url), tamperer(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_budget_across_instances() {
    scenario(async |url| {
        store_suite::one_call_budget_across_instances(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_token_budget_across_instances() {
    scenario(async |url| {
        store_suite::one_token_budget_across_instances(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_are_heard_on_every_instance_once() {
    scenario(async |url| {
        store_suite::approvals_are_heard_on_every_instance_once(opener(&url)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_whose_connections_are_cut_catches_up_once() {
    scenario(async |url| {
        let b = format!("{url}?application_name=instance-b");
        a_follower_cut_off_catches_up_once(opener(&url), opener(&b), counter(&url)).await;
    })
    .await;
}

/// B's connections to the database are cut (`cut_b` runs the SQL that does it) while A makes
/// calls: once B is back, its subscriber hears of every call A made, in order, once.
async fn a_follower_cut_off_catches_up_once(open_a: Open, open_b: Open, cut_b: Count) {
    let (a, b) = (
        store_suite::instance(&open_a).await,
        store_suite::instance(&open_b).await,
    );
    let mut on_b = b.events();
    store_suite::warm_up(&a, &mut on_b, "warm").await;
    let _ = store_suite::rest(&mut on_b).await;
    let cut = cut_b("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name IN ('instance-b', 'toolgate events')").await;
    assert!(
        cut >= 2,
        "B's listener and its pool's connections are cut ({cut})"
    );
    let made: Vec<String> = (0..30).map(|n| format!("gap-{n}")).collect();
    for id in &made {
        let call = ToolCall::new(id.as_str(), "ping", json!({"note": id}));
        assert!(a.call(&store_suite::alice(), call).await.result.is_ok());
    }
    let mut heard = Vec::new();
    while heard.len() < made.len() {
        let event = tokio::time::timeout(Duration::from_secs(20), on_b.recv())
            .await
            .expect("B catches up within twenty seconds")
            .unwrap();
        if let EventKind::CallFinished { call_id, .. } = &event.kind {
            heard.push(call_id.clone());
        }
    }
    assert_eq!(heard, made);
    let again = store_suite::rest(&mut on_b).await;
    assert!(again.is_empty(), "heard twice: {again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_is_counted_across_instances() {
    scenario(async |url| {
        store_suite::usage_is_counted_across_instances(opener(&url)).await;
    })
    .await;
}
