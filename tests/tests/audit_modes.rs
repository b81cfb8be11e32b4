//! When the audit store fails: with a store of the application's, by default the call is
//! recorded before it runs, and does not run at all when it cannot be; only an application
//! that chose `AuditMode::AfterCall` knowingly gets the answer of a call left unrecorded.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use toolgate::audit::{AuditMode, AuditRecord, AuditStore, ChainBreak, VerifiedChain};
use toolgate::prelude::*;
use toolgate::store::{StoreError, StoreFuture};

/// Who got a letter: tests run in parallel, so each sends to its own names.
static SENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn sent(to: &str) -> usize {
    SENT.lock()
        .unwrap()
        .iter()
        .filter(|name| *name == to)
        .count()
}

/// Send a letter.
#[tool(permission = "user")]
fn send_letter(to: String) -> String {
    SENT.lock().unwrap().push(to.clone());
    format!("sent to {to}")
}

/// An audit database that can go down; keeps the outcomes it was given.
#[derive(Default)]
struct FlakyAudit {
    down: AtomicBool,
    outcomes: Mutex<Vec<String>>,
}

impl AuditStore for FlakyAudit {
    fn append(&self, record: AuditRecord) -> StoreFuture<'_, ()> {
        let result = if self.down.load(Ordering::SeqCst) {
            Err(StoreError::unavailable("test audit", "connection refused"))
        } else {
            self.outcomes.lock().unwrap().push(record.outcome);
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }
    fn history<'a>(&'a self, _: &'a str, _: usize) -> StoreFuture<'a, Vec<AuditRecord>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>> {
        let records = self.outcomes.lock().unwrap().len() as u64;
        let chain = VerifiedChain {
            records,
            last_hash: None,
        };
        Box::pin(std::future::ready(Ok(Ok(chain))))
    }
}

fn registry(audit: &Arc<FlakyAudit>, mode: Option<AuditMode>) -> Registry {
    let builder = Registry::builder()
        .roles(["user"])
        .expect_tools(["send_letter"])
        .audit_store(Arc::clone(audit));
    match mode {
        Some(mode) => builder.audit_mode(mode),
        None => builder,
    }
    .build()
    .unwrap()
}

async fn send(registry: &Registry, to: &str) -> Result<serde_json::Value, ToolError> {
    let call = ToolCall::new("1", "send_letter", json!({"to": to}));
    registry
        .call(&Caller::new("ann", "user"), call)
        .await
        .result
}

#[tokio::test]
async fn after_call_chosen_knowingly_one_record_per_call_and_an_outage_loses_no_answer() {
    let audit = Arc::new(FlakyAudit::default());
    let registry = registry(&audit, Some(AuditMode::AfterCall));
    assert_eq!(
        send(&registry, "default-up").await.unwrap(),
        json!("sent to default-up")
    );
    assert_eq!(*audit.outcomes.lock().unwrap(), ["ok"]);

    audit.down.store(true, Ordering::SeqCst);
    // The tool ran: its answer goes back, so the model does not send the letter twice.
    assert!(send(&registry, "default-down").await.is_ok());
    assert_eq!(sent("default-down"), 1);
}

#[tokio::test]
async fn before_run_records_first_and_runs_nothing_unrecorded() {
    let audit = Arc::new(FlakyAudit::default());
    let registry = registry(&audit, Some(AuditMode::BeforeRun));
    assert!(send(&registry, "before-up").await.is_ok());
    assert_eq!(*audit.outcomes.lock().unwrap(), ["started", "ok"]);

    audit.down.store(true, Ordering::SeqCst);
    let error = send(&registry, "before-down").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::StoreUnavailable);
    assert!(error.message.contains("did not run"), "{}", error.message);
    assert_eq!(sent("before-down"), 0, "nothing ran unrecorded");
}

#[tokio::test]
async fn with_a_store_of_its_own_a_registry_runs_nothing_unrecorded_by_default() {
    let audit = Arc::new(FlakyAudit::default());
    let registry = registry(&audit, None);
    assert!(send(&registry, "unset-up").await.is_ok());
    assert_eq!(*audit.outcomes.lock().unwrap(), ["started", "ok"]);

    audit.down.store(true, Ordering::SeqCst);
    let error = send(&registry, "unset-down").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::StoreUnavailable);
    assert_eq!(sent("unset-down"), 0, "nothing ran unrecorded");
}
