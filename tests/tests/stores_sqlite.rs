//! The SQLite store: state in one file survives a restart, and several connections to the
//! file (as several processes would open) share approvals, grants, budgets and one audit
//! chain.

mod store_suite;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use store_suite::{Count, Open, Tamper};
use toolgate::store::sqlite::SqliteStore;
use toolgate::store::{StoreError, Stores};

fn file() -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("state.db");
    (folder, path)
}

fn opener(path: &Path) -> Open {
    let path = path.to_path_buf();
    Arc::new(move || {
        let path = path.clone();
        Box::pin(async move { SqliteStore::open(&path).await.unwrap().stores() })
    })
}

fn tamperer(path: &Path) -> Tamper {
    let path = path.to_path_buf();
    Arc::new(move |sql: &'static str| {
        let path = path.clone();
        Box::pin(async move {
            let connection = rusqlite::Connection::open(&path).unwrap();
            connection.execute_batch(sql).unwrap();
        })
    })
}

fn counter(path: &Path) -> Count {
    let path = path.to_path_buf();
    Arc::new(move |sql: &'static str| {
        let path = path.clone();
        Box::pin(async move {
            let connection = rusqlite::Connection::open(&path).unwrap();
            connection.query_row(sql, [], |row| row.get(0)).unwrap()
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_calls_are_refused_and_cleaned_up() {
    let (_folder, path) = file();
    store_suite::expired_calls_are_refused_and_cleaned_up(opener(&path), counter(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tickets_survive_a_restart_and_redeem_once() {
    let (_folder, path) = file();
    store_suite::tickets_survive_a_restart_and_redeem_once(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_redemptions_across_instances_run_once() {
    let (_folder, path) = file();
    store_suite::concurrent_redemptions_across_instances_run_once(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_survive_a_restart() {
    let (_folder, path) = file();
    store_suite::grants_survive_a_restart(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_rate_limit_across_instances() {
    let (_folder, path) = file();
    store_suite::one_rate_limit_across_instances(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_chain_holds_across_instances() {
    let (_folder, path) = file();
    store_suite::the_audit_chain_holds_across_instances(opener(&path), 1000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampering_with_the_audit_chain_is_detected() {
    let (_folder, path) = file();
    store_suite::tampering_with_the_audit_chain_is_detected(opener(&path), tamperer(&path)).await;
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let (_folder, path) = file();
    SqliteStore::open(&path).await.unwrap();
    let reopen = SqliteStore::open(path.clone());
    let reopened = async move { reopen.await.map(|store| store.stores()) };
    store_suite::a_newer_schema_is_refused(reopened, tamperer(&path)).await;
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_a_clear_error() {
    let (_folder, path) = file();
    std::fs::write(&path, "these are notes, not a database ".repeat(100)).unwrap();
    let error = SqliteStore::open(&path).await.unwrap_err();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("not a database"), "{message}");
}

#[tokio::test]
async fn addresses_name_their_store() {
    let (_folder, path) = file();
    let stores = Stores::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let registry = toolgate::Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .stores(&stores)
        .build()
        .unwrap();
    assert!(registry.history("anyone", 5).await.unwrap().is_empty());
    assert!(path.exists());
    let error = Stores::open("mysql://localhost/db").await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("`memory`, `sqlite:PATH` or `postgres://"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_each_call_is_recorded_before_it_runs() {
    let (_folder, path) = file();
    store_suite::by_default_each_call_is_recorded_before_it_runs(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_id_no_store_can_keep_is_refused_and_recorded() {
    let (_folder, path) = file();
    store_suite::a_caller_id_no_store_can_keep_is_refused_and_recorded(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_shared_by_instances_and_taken_once() {
    let (_folder, path) = file();
    store_suite::sessions_are_shared_by_instances_and_taken_once(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_one_database_is_migrated() {
    let (_folder, path) = file();
    store_suite::a_version_one_database_is_migrated(opener(&path), tamperer(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_budget_across_instances() {
    let (_folder, path) = file();
    store_suite::one_call_budget_across_instances(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_token_budget_across_instances() {
    let (_folder, path) = file();
    store_suite::one_token_budget_across_instances(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_are_heard_on_every_instance_once() {
    let (_folder, path) = file();
    store_suite::approvals_are_heard_on_every_instance_once(opener(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_is_counted_across_instances() {
    let (_folder, path) = file();
    store_suite::usage_is_counted_across_instances(opener(&path)).await;
}
