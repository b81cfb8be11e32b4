//! The MCP server against the official Python MCP SDK as the client (installed with pip into
//! a virtual environment the test sets up), over stdio and Streamable HTTP.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

#[path = "mcp/support.rs"]
mod support;
use support::{python, start_http};

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

/// Runs the Python client and returns its report.
fn run_client(args: &[&str], sandbox: &Path) -> Value {
    let output = Command::new(python())
        .arg(client_script())
        .args(args)
        .env("MCP_SANDBOX", sandbox)
        .env("MCP_TASKS_DB", sandbox.join("tasks.db"))
        .output()
        .expect("the Python client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .expect("the client prints a JSON report")
}

fn assert_common(report: &Value) {
    assert_eq!(report["add"]["is_error"], false);
    assert_eq!(report["add"]["text"], "42");
    assert_eq!(
        report["add"]["structured"],
        serde_json::json!({"result": 42}),
        "non-object results are wrapped"
    );
    assert_eq!(
        report["invalid"]["is_error"], true,
        "argument errors are tool results the model can read"
    );
    assert!(
        report["invalid"]["text"]
            .as_str()
            .unwrap()
            .contains("invalid_arguments")
    );
    assert!(
        report["unknown"]["no_such_tool"]
            .as_str()
            .unwrap()
            .starts_with("protocol error"),
        "{report}"
    );
    assert_eq!(report["annotations"]["add"]["readOnlyHint"], true);
    assert_eq!(report["annotations"]["add"]["openWorldHint"], false);
    assert_eq!(report["output_schemas"]["add"]["type"], "object");
}

#[test]
fn stdio_user_sees_its_tools_and_calls_them() {
    let sandbox = TempDir::new().unwrap();
    let server = env!("CARGO_BIN_EXE_mcp_server");
    let report = run_client(
        &[
            "stdio",
            server,
            "--stdio",
            "--role",
            "user",
            "--page-size",
            "4",
        ],
        sandbox.path(),
    );
    assert_common(&report);
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"reverse_text") && tools.contains(&"read_file"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"get_device_info"),
        "an admin tool is hidden from a user"
    );
    assert_eq!(
        report["pages"].as_u64().unwrap(),
        tools.len().div_ceil(4) as u64,
        "the list is paginated"
    );
    assert_eq!(report["whoami"], "local-user (user)");
    assert_eq!(report["too_long"]["is_error"], true);
    assert!(
        report["too_long"]["text"]
            .as_str()
            .unwrap()
            .contains("longer than 100 characters")
    );
    assert!(
        report["unknown"]["get_device_info"]
            .as_str()
            .unwrap()
            .starts_with("protocol error: unknown tool")
    );
}

#[test]
fn stdio_public_caller_sees_only_public_tools() {
    let sandbox = TempDir::new().unwrap();
    let server = env!("CARGO_BIN_EXE_mcp_server");
    let report = run_client(
        &["stdio", server, "--stdio", "--role", "public"],
        sandbox.path(),
    );
    assert_common(&report);
    assert_eq!(report["tools"], serde_json::json!(["add", "whoami"]));
    assert!(
        report["unknown"]["reverse_text"]
            .as_str()
            .unwrap()
            .starts_with("protocol error: unknown tool")
    );
}

#[test]
fn http_callers_come_from_the_authentication_hook() {
    let sandbox = TempDir::new().unwrap();
    let server = start_http(sandbox.path());
    let anonymous = run_client(&["http", &server.url], sandbox.path());
    assert_common(&anonymous);
    assert_eq!(anonymous["tools"], serde_json::json!(["add", "whoami"]));
    assert_eq!(anonymous["whoami"], "anonymous (public)");
    let admin = run_client(&["http", &server.url, "admin-token"], sandbox.path());
    assert_common(&admin);
    assert!(
        admin["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool == "get_device_info")
    );
    assert_eq!(admin["whoami"], "admin-1 (admin)");
    assert_eq!(admin["too_long"]["is_error"], true);
}
