//! An approver that asks in the terminal: `y` approves, `always` approves this tool for this
//! caller from now on, anything else (or no answer) refuses.
//!
//! Run with `cargo run -p toolgate-examples --bin approve_in_terminal`.

use std::io::{BufRead, Write};

use serde_json::json;
use toolgate::approval::{ApprovalAnswer, ApprovalRequest};
use toolgate::prelude::*;

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

/// Asks on the terminal; reading stdin blocks, so it happens on the blocking pool.
async fn ask_in_terminal(request: ApprovalRequest) -> ApprovalAnswer {
    let question = format!(
        "{} wants to run `{}` with {} ({}). Allow? [y/N/always] ",
        request.caller.id(),
        request.tool.name,
        request.arguments,
        request.reason
    );
    let answer = tokio::task::spawn_blocking(move || {
        print!("{question}");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_lowercase()),
        }
    })
    .await
    .ok()
    .flatten();
    match answer.as_deref() {
        Some("y" | "yes") => ApprovalAnswer::Approve,
        Some("always") => ApprovalAnswer::ApproveAlways,
        Some(_) => ApprovalAnswer::Deny {
            reason: "the user said no".into(),
        },
        None => ApprovalAnswer::Deny {
            reason: "no one answered".into(),
        },
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder()
        .roles(["user"])
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
