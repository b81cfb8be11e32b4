//! The server's command line: `--help` answers and touches nothing; a missing transport is a
//! usage error, also before anything is created.

use std::process::Command;

fn run(args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let folder = tempfile::TempDir::new().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp_server"))
        .args(args)
        .current_dir(folder.path())
        .env_remove("MCP_SANDBOX")
        .env_remove("MCP_TASKS_DB")
        .output()
        .unwrap();
    (output, folder)
}

fn is_empty(folder: &tempfile::TempDir) -> bool {
    std::fs::read_dir(folder.path()).unwrap().next().is_none()
}

#[test]
fn help_answers_and_creates_nothing() {
    let (output, folder) = run(&["--help"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for flag in [
        "--stdio",
        "--http",
        "--role",
        "--sandbox",
        "--tasks-db",
        "--allowed-host",
    ] {
        assert!(text.contains(flag), "{flag} in {text}");
    }
    assert!(is_empty(&folder), "no workspace or database was created");
}

#[test]
fn a_missing_transport_is_a_usage_error_that_creates_nothing() {
    let (output, folder) = run(&[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--stdio"));
    assert!(is_empty(&folder));
    let (output, folder) = run(&["--stdio", "--role", "root"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(is_empty(&folder));
}
