//! Asking a person in the terminal.

use std::io::{BufRead, Write};

use toolgate::approval::{ApprovalAnswer, ApprovalRequest};

/// Prints `question` and reads one line, trimmed; `None` at the end of input. Reading stdin
/// blocks, so it happens on the blocking pool.
pub async fn prompt(question: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        print!("{question}");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_owned()),
        }
    })
    .await
    .ok()
    .flatten()
}

/// An approver that asks on the terminal: `y` approves, `always` approves this tool for this
/// caller from now on, anything else (or no answer) refuses.
pub async fn ask_in_terminal(request: ApprovalRequest) -> ApprovalAnswer {
    let question = format!(
        "{} wants to run `{}` with {} ({}). Allow? [y/N/always] ",
        request.caller.id(),
        request.tool.name,
        request.arguments,
        request.reason
    );
    match prompt(question)
        .await
        .map(|answer| answer.to_lowercase())
        .as_deref()
    {
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
