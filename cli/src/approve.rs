//! Asking the person at the terminal whether a call may run (or reading the answer from
//! stdin when it is not a terminal): `[y/N/always]`.

use std::io::{BufRead, IsTerminal, Write};

use toolgate::approval::{ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver};

use crate::output;

/// Asks the person at the terminal (or reads the answer from stdin when it is not one).
pub struct TerminalApprover;

impl Approver for TerminalApprover {
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture {
        Box::pin(async move {
            let answer = tokio::task::spawn_blocking(move || ask(&request)).await;
            answer.unwrap_or(ApprovalAnswer::Deny {
                reason: "the approval could not be asked".into(),
            })
        })
    }
}

fn ask(request: &ApprovalRequest) -> ApprovalAnswer {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} `{}` ({} risk) needs approval: {}",
        output::warn("approval:"),
        request.tool.name,
        request.tool.risk,
        request.reason
    );
    let _ = writeln!(
        err,
        "  caller: {} ({})",
        request.caller.id(),
        request.caller.role()
    );
    let _ = writeln!(err, "  arguments: {}", request.arguments);
    if let Some(review) = &request.review {
        let _ = writeln!(err, "  it will: {review}");
    }
    let _ = write!(err, "Run it? [y/N/always] ");
    let _ = err.flush();
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if !std::io::stdin().is_terminal() {
        let _ = writeln!(err, "{}", line.trim());
    }
    match (read, line.trim().to_ascii_lowercase().as_str()) {
        (Ok(0), _) | (Err(_), _) => ApprovalAnswer::Deny {
            reason: "no answer was given (stdin ended)".into(),
        },
        (_, "y" | "yes") => ApprovalAnswer::Approve,
        (_, "always" | "a") => ApprovalAnswer::ApproveAlways,
        _ => ApprovalAnswer::Deny {
            reason: "denied at the terminal".into(),
        },
    }
}
