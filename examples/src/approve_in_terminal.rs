//! An approver that asks in the terminal: `y` approves, `always` approves this tool for this
//! caller from now on, anything else (or no answer) refuses.
//!
//! Run with `cargo run -p toolgate-examples --bin approve_in_terminal`.

use serde_json::json;
use toolgate::prelude::*;
use toolgate_examples::terminal::ask_in_terminal;

/// List the files of a folder.
#[tool(permission = "user", read_only)]
fn list_files(folder: String) -> Vec<String> {
    vec![
        format!("{folder}/notes.txt"),
        format!("{folder}/report.pdf"),
    ]
}

/// Delete a file.
#[tool(permission = "user", destructive)]
fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder()
        .roles(["user"])
        // The examples' library (linked for its terminal approver) brings the clinic's
        // `#[tool]`s too; this program wants only its own.
        .filter_linked(|tool| tool.group.is_none())
        .approver("terminal", ask_in_terminal)
        .build()?;
    let caller = Caller::new("assistant", "user");
    let calls = vec![
        ToolCall::new("1", "list_files", json!({"folder": "docs"})),
        ToolCall::new("2", "delete_file", json!({"path": "docs/notes.txt"})),
        ToolCall::new("3", "delete_file", json!({"path": "docs/report.pdf"})),
        ToolCall::new("4", "delete_file", json!({"path": "docs/old.txt"})),
    ];
    for outcome in registry.run_batch(&caller, calls).await {
        match &outcome.result {
            Ok(value) => println!("{} {}: {value}", outcome.call_id, outcome.tool),
            Err(error) => println!(
                "{} {}: {} ({})",
                outcome.call_id, outcome.tool, error.message, error.code
            ),
        }
    }
    Ok(())
}
