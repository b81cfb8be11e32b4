//! Approval over MCP with the official Python SDK as the client: a destructive call asks
//! the person at the client, by the 2026-07-28 `InputRequiredResult` flow or by an
//! elicitation request on the `initialize` handshake, where the caller's role may decide
//! it; anyone else's call waits with a ticket for an approver.

use std::path::Path;

use serde_json::Value;
use tempfile::TempDir;

#[path = "mcp/support.rs"]
#[allow(dead_code)] // each test uses part of it
mod support;
use support::{run_script, start_http};

/// Runs `approve.py` and returns its report.
fn approve(mode: &str, url: &str, token: &str, choice: &str, sandbox: &Path) -> Value {
    run_script("approve.py", &[mode, url, token, choice], sandbox)
}

fn text(report: &Value, key: &str) -> String {
    report[key]["text"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn the_person_at_the_client_approves_or_refuses() {
    let sandbox = TempDir::new().unwrap();
    let server = start_http(sandbox.path());

    // Protocol 2026-07-28: the form comes back in the result, the SDK asks and calls again.
    let report = approve(
        "auto",
        &server.url,
        "admin-token",
        "approve",
        sandbox.path(),
    );
    assert_eq!(report["protocol"], "2026-07-28", "{report}");
    assert_eq!(report["call"]["is_error"], false, "{report}");
    let asked = report["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "asked once: {report}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.contains("write_file") && message.contains("approved-auto.txt"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.path().join("approved-auto.txt")).unwrap(),
        "hello"
    );
    // The same rounds by hand: only the genuine state, once, for these arguments, runs.
    let rounds = &report["rounds"];
    assert_eq!(rounds["first"], "InputRequiredResult", "{rounds}");
    assert_eq!(rounds["key"], "toolgate_approval");
    let tampered = rounds["tampered"]["protocol_error"]
        .as_str()
        .unwrap_or_default();
    assert!(tampered.contains("invalid requestState"), "{rounds}");
    let other = rounds["other_arguments"]["protocol_error"]
        .as_str()
        .unwrap_or_default();
    assert!(other.contains("another call"), "{rounds}");
    assert_eq!(rounds["genuine"]["is_error"], false, "{rounds}");
    assert_eq!(rounds["replayed"]["is_error"], true, "single use: {rounds}");
    let replayed = rounds["replayed"]["text"].as_str().unwrap_or_default();
    assert!(replayed.contains("approval_denied"), "{replayed}");

    // A refusal: nothing written, the person's reason goes back to the model.
    let report = approve(
        "2026-07-28",
        &server.url,
        "admin-token",
        "refuse",
        sandbox.path(),
    );
    assert_eq!(report["call"]["is_error"], true, "{report}");
    let refused = text(&report, "call");
    assert!(
        refused.contains("approval_denied") && refused.contains("not today"),
        "{refused}"
    );
    assert!(!sandbox.path().join("approved-2026-07-28.txt").exists());

    // The `initialize` handshake: the server asks by an elicitation request, while the call waits.
    let report = approve(
        "legacy",
        &server.url,
        "admin-token",
        "approve",
        sandbox.path(),
    );
    assert_ne!(report["protocol"], "2026-07-28", "{report}");
    assert_eq!(report["call"]["is_error"], false, "{report}");
    assert_eq!(report["asked"].as_array().unwrap().len(), 1, "{report}");
    assert!(sandbox.path().join("approved-legacy.txt").exists());
    let report = approve(
        "legacy",
        &server.url,
        "admin-token",
        "refuse",
        sandbox.path(),
    );
    assert!(text(&report, "call").contains("not today"), "{report}");

    // A user may not decide a call (admins approve): it waits with a ticket, nobody is asked.
    let report = approve("auto", &server.url, "user-token", "approve", sandbox.path());
    assert_eq!(report["call"]["is_error"], true, "{report}");
    assert!(
        text(&report, "call").contains("approval_required"),
        "{report}"
    );
    assert_eq!(report["asked"].as_array().unwrap().len(), 0, "{report}");
}
