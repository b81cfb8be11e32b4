//! When the audit store fails: after the call (the default), the answer still goes back;
//! before the run (`AuditMode::BeforeRun`), the call does not run at all.

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

fn registry(audit: &Arc<FlakyAudit>, mode: AuditMode) -> Registry {
    Registry::builder()
        .roles(["user"])
        .expect_tools(["send_letter"])
        .audit_store(Arc::clone(audit))
        .audit_mode(mode)
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
async fn by_default_one_record_per_call_and_an_audit_outage_loses_no_answer() {
    let audit = Arc::new(FlakyAudit::default());
    let registry = registry(&audit, AuditMode::default());
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
    let registry = registry(&audit, AuditMode::BeforeRun);
    assert!(send(&registry, "before-up").await.is_ok());
    assert_eq!(*audit.outcomes.lock().unwrap(), ["started", "ok"]);

    audit.down.store(true, Ordering::SeqCst);
    let error = send(&registry, "before-down").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::StoreUnavailable);
    assert!(error.message.contains("did not run"), "{}", error.message);
    assert_eq!(sent("before-down"), 0, "nothing ran unrecorded");
}
