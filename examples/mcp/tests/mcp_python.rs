//! The MCP server against the official Python MCP SDK as the client (installed with pip into
//! a virtual environment the test sets up), over stdio and Streamable HTTP.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use axum::http::request::Parts;
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::prelude::*;
use toolgate::{FnTool, ToolDefinition};

#[path = "mcp/support.rs"]
#[allow(dead_code)] // each test uses part of it
mod support;
use support::{python, run_script, script, start_http};

/// Runs the Python client and returns its report.
fn run_client(args: &[&str], sandbox: &Path) -> Value {
    run_script("client.py", args, sandbox)
}

fn assert_common(report: &Value) {
    assert_eq!(
        report["server_info"],
        serde_json::json!({
            "name": "toolgate-mcp-example",
            "version": env!("CARGO_PKG_VERSION"),
            "title": "toolgate's example MCP server: files, tasks and programs"
        }),
        "serverInfo names the application"
    );
    assert_eq!(
        report["list_cache"],
        serde_json::json!({"ttl_ms": 60_000, "cache_scope": "private"}),
        "callers of different roles see different lists: private to each"
    );
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
    std::fs::write(sandbox.path().join("todo.txt"), "Water the plants").unwrap();
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
    assert_eq!(
        report["progress"],
        serde_json::json!({
            "heard": [[1.0, 3.0, "counted 1"], [2.0, 3.0, "counted 2"], [3.0, 3.0, "counted 3"]],
            "result": "3"
        }),
        "every progress report arrives, in order, before the result"
    );
    // A workflow is a tool like any other: its steps ran as the client's caller.
    let workflow = &report["workflow"];
    assert_eq!(workflow["is_error"], false, "{workflow}");
    let ran: Value = serde_json::from_str(workflow["text"].as_str().unwrap()).unwrap();
    assert_eq!(ran["output"]["title"], "Water the plants", "{workflow}");
    assert_eq!(ran["steps"][0]["step"], "read");
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
            .starts_with("protocol error: there is no tool named")
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
            .starts_with("protocol error: there is no tool named")
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

fn echo(name: &str, permission: &str) -> FnTool {
    let definition = ToolDefinition::new(
        name,
        "Echo the arguments.",
        permission,
        json!({"type": "object", "properties": {}}),
    );
    FnTool::new(definition, |_, arguments| async move { Ok(arguments) })
}

/// A protocol 2026-07-28 client asks for `list_changed` with `subscriptions/listen`; it hears
/// of a tool registered at run time, and then lists exactly the tools of its role.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_client_hears_of_run_time_changes() {
    let registry = Registry::builder()
        .roles(["public", "admin"])
        .linked_tools(false)
        .build()
        .unwrap();
    let everyone_public = |_: &Parts| Ok(Caller::new("anonymous", "public"));
    let app = axum::Router::new().nest_service(
        "/mcp",
        toolgate::mcp::http_service(registry.clone(), everyone_public),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let python = tokio::task::spawn_blocking(python).await.unwrap();
    let mut client = Command::new(python)
        .arg(script("listen.py"))
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python client runs");
    let mut stderr = client.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut lines = BufReader::new(client.stdout.take().unwrap()).lines();
    let (first, lines) = tokio::task::spawn_blocking(move || (lines.next(), lines))
        .await
        .unwrap();
    let first = first.and_then(Result::ok);
    if first.as_deref() != Some("listening") {
        let _ = client.kill();
        panic!("no subscription: {first:?}\n{}", errors.join().unwrap());
    }

    registry.register(echo("admin_only", "admin")).unwrap();
    registry.register(echo("for_everyone", "public")).unwrap();

    let (report, status) = tokio::task::spawn_blocking(move || {
        let report = lines.map_while(Result::ok).last();
        (report, client.wait())
    })
    .await
    .unwrap();
    let errors = errors.join().unwrap();
    assert!(status.unwrap().success(), "the client failed:\n{errors}");
    let report: Value = serde_json::from_str(&report.unwrap_or_default())
        .unwrap_or_else(|_| panic!("the client prints a JSON report:\n{errors}"));
    assert_eq!(report["protocol"], "2026-07-28", "{report}");
    assert_eq!(report["honored"], json!({"toolsListChanged": true}));
    assert_eq!(report["event"], "ToolsListChanged");
    assert_eq!(report["tools"], json!(["for_everyone"]));
}
