//! Application code the registry awaits on a call's path — a grant store, an audit store —
//! may panic: that call gets a `panicked` outcome (or, when the tool already ran, its
//! answer), the other calls of its batch theirs, and the registry keeps serving.

use std::sync::atomic::{AtomicUsize, Ordering};

use toolgate::approval::{Grant, GrantStore};
use toolgate::audit::{AuditMode, AuditRecord, AuditStore, ChainBreak, VerifiedChain};
use toolgate::prelude::*;
use toolgate::store::StoreFuture;

static ERASED: AtomicUsize = AtomicUsize::new(0);

/// Look a word up.
#[tool(permission = "user", read_only)]
fn look_up(word: String) -> String {
    format!("{word}: found")
}

/// Erase the archive.
#[tool(permission = "user", destructive)]
fn erase_archive() -> String {
    ERASED.fetch_add(1, Ordering::SeqCst);
    "erased".into()
}

struct PanickingGrants;

impl GrantStore for PanickingGrants {
    fn grant(&self, _: Grant) -> StoreFuture<'_, ()> {
        panic!("grant store failed")
    }
    fn granted<'a>(&'a self, _: &'a str, _: &'a str) -> StoreFuture<'a, bool> {
        panic!("grant store failed")
    }
    fn revoke<'a>(&'a self, _: &'a str, _: &'a str) -> StoreFuture<'a, bool> {
        panic!("grant store failed")
    }
    fn list(&self) -> StoreFuture<'_, Vec<Grant>> {
        panic!("grant store failed")
    }
}

struct PanickingAudit;

impl AuditStore for PanickingAudit {
    fn append(&self, _: AuditRecord) -> StoreFuture<'_, ()> {
        panic!("audit store failed")
    }
    fn history<'a>(&'a self, _: &'a str, _: usize) -> StoreFuture<'a, Vec<AuditRecord>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
    fn verify(&self) -> StoreFuture<'_, Result<VerifiedChain, ChainBreak>> {
        panic!("audit store failed")
    }
}

fn call(id: &str, tool: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, tool, arguments)
}

fn summary(outcomes: &[ToolOutcome]) -> Vec<(String, Result<String, String>)> {
    outcomes
        .iter()
        .map(|outcome| {
            let result = match &outcome.result {
                Ok(value) => Ok(value.as_str().unwrap_or_default().to_owned()),
                Err(error) => Err(error.code.to_string()),
            };
            (outcome.call_id.to_string(), result)
        })
        .collect()
}

#[tokio::test]
async fn a_panicking_grant_store_fails_only_the_call_that_reached_it() {
    let registry = Registry::builder()
        .roles(["user"])
        .grant_store(PanickingGrants)
        .build()
        .unwrap();
    let caller = Caller::new("ann", "user");
    let calls = vec![
        call("1", "look_up", r#"{"word": "ember"}"#),
        call("2", "erase_archive", "{}"),
        call("3", "look_up", r#"{"word": "quill"}"#),
    ];
    let outcomes = registry.run_batch(&caller, calls).await;
    assert_eq!(
        summary(&outcomes),
        [
            ("1".to_owned(), Ok("ember: found".to_owned())),
            ("2".to_owned(), Err("panicked".to_owned())),
            ("3".to_owned(), Ok("quill: found".to_owned())),
        ]
    );
    let error = outcomes[1].result.as_ref().unwrap_err();
    assert!(
        !error.message.contains("grant store failed"),
        "the panic text stays in the log: {}",
        error.message
    );
    assert_eq!(ERASED.load(Ordering::SeqCst), 0, "nothing ran unapproved");
    let single = registry
        .call(&caller, call("4", "erase_archive", "{}"))
        .await;
    assert_eq!(single.error().unwrap().code, ErrorCode::Panicked);
    let after = registry
        .call(&caller, call("5", "look_up", r#"{"word": "x"}"#))
        .await;
    assert!(after.result.is_ok(), "the registry keeps serving");
}

#[tokio::test]
async fn a_panicking_audit_store_loses_the_record_not_the_answer() {
    // Chosen knowingly: the record is written when the call ends.
    let registry = Registry::builder()
        .roles(["user"])
        .audit_store(PanickingAudit)
        .audit_mode(AuditMode::AfterCall)
        .build()
        .unwrap();
    let caller = Caller::new("ann", "user");
    let calls = vec![
        call("1", "look_up", r#"{"word": "ember"}"#),
        call("2", "look_up", r#"{"word": "quill"}"#),
    ];
    let outcomes = registry.run_batch(&caller, calls).await;
    assert_eq!(
        summary(&outcomes),
        [
            ("1".to_owned(), Ok("ember: found".to_owned())),
            ("2".to_owned(), Ok("quill: found".to_owned())),
        ]
    );

    // Recorded before the run (the default with a store), a record that cannot be kept
    // stops the call.
    let before_run = Registry::builder()
        .roles(["user"])
        .audit_store(PanickingAudit)
        .build()
        .unwrap();
    let outcome = before_run
        .call(&caller, call("3", "look_up", r#"{"word": "ember"}"#))
        .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::Panicked);
}
