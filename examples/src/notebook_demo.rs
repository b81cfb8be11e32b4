//! A notebook an assistant edits with tools, and every call's events shown as they happen:
//! requested → (confirmation asked → decided) → executed. Deleting a cell needs a person's
//! confirmation, asked here in the terminal.
//!
//! `cargo run -p toolgate-examples --bin notebook` plays an assistant's calls;
//! `... --bin notebook -- --model http://127.0.0.1:8080/v1 --name gemma` lets a model make
//! them, one message a line from stdin.

use std::sync::Arc;

use clap::Parser;
use serde_json::json;
use toolgate::agent::Agent;
use toolgate::agent::models::OpenAiChat;
use toolgate::events::EventKind;
use toolgate::prelude::*;
use toolgate_examples::notebook::{self, Notebook};
use toolgate_examples::terminal::{ask_in_terminal, prompt};

/// A notebook edited through tools, with a person confirming deletions.
#[derive(Parser)]
struct Options {
    /// An OpenAI-compatible server to chat with (default: play a scripted assistant).
    #[arg(long)]
    model: Option<String>,
    /// The model's name.
    #[arg(long, default_value = "gemma")]
    name: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let notebook = Arc::new(std::sync::Mutex::new(Notebook::default()));
    let builder = Registry::builder()
        .roles(["user"])
        .approver("terminal", ask_in_terminal);
    let registry = notebook::registry(builder, "user", Arc::clone(&notebook))?;
    let shown = show_events(&registry);
    let caller = Caller::new("assistant", "user");
    match options.model {
        Some(url) => {
            converse(
                registry.clone(),
                &caller,
                OpenAiChat::new(url, options.name),
            )
            .await
        }
        None => play(&registry, &caller).await,
    }
    // Let the last events print before the notebook does.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    shown.abort();
    let context = registry
        .call(
            &caller,
            ToolCall::new("end", "get_notebook_context", json!({})),
        )
        .await;
    println!(
        "notebook: {}",
        context
            .result
            .map(|value| value.to_string())
            .unwrap_or_default()
    );
    Ok(())
}

/// Prints each call's events as they happen.
fn show_events(registry: &Registry) -> tokio::task::JoinHandle<()> {
    let mut events = registry.events();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            let line = match &event.kind {
                EventKind::CallRequested {
                    tool,
                    arguments,
                    needs_approval,
                    ..
                } => {
                    format!(
                        "→ {tool} requested {arguments}{}",
                        if *needs_approval {
                            " (needs confirmation)"
                        } else {
                            ""
                        }
                    )
                }
                EventKind::ApprovalRequested { tool, reason, .. } => format!("? {tool}: {reason}"),
                EventKind::ApprovalDecided {
                    tool,
                    decision,
                    decided_by,
                    ..
                } => format!("· {tool} {decision} by {decided_by}"),
                EventKind::CallFinished {
                    tool,
                    ok: true,
                    result,
                    duration_ms,
                    ..
                } => {
                    format!(
                        "= {tool} executed in {duration_ms:.1} ms: {}",
                        result.clone().unwrap_or_default()
                    )
                }
                EventKind::CallFinished { tool, error, .. } => {
                    format!(
                        "✗ {tool}: {}",
                        error
                            .as_ref()
                            .map(|error| error.code.as_str().to_owned())
                            .unwrap_or_default()
                    )
                }
                _ => continue,
            };
            println!("{line}");
        }
    })
}

/// The calls an assistant makes to build a small price calculation, then tidy up.
async fn play(registry: &Registry, caller: &Caller) {
    let calls = [
        (
            "create_cell",
            json!({"kind": "markdown", "source": "# Price check"}),
        ),
        (
            "create_cell",
            json!({"kind": "code", "source": "price = 12.5; count = 4"}),
        ),
        (
            "create_cell",
            json!({"kind": "code", "source": "price * count"}),
        ),
        ("execute_cell", json!({"id": 2})),
        ("execute_cell", json!({"id": 3})),
        (
            "modify_cell",
            json!({"id": 3, "source": "price * count * 1.2"}),
        ),
        ("execute_cell", json!({"id": 3})),
        ("move_cell", json!({"id": 3, "position": 0})),
        ("delete_cell", json!({"id": 1})),
        ("delete_cell", json!({"id": 1})),
    ];
    for (index, (tool, arguments)) in calls.into_iter().enumerate() {
        let outcome = registry
            .call(caller, ToolCall::new(format!("c{index}"), tool, arguments))
            .await;
        // Keep the printed order: this call's events before the next call starts.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let _ = outcome;
    }
}

/// One message a line, answered by the model with the notebook's tools.
async fn converse(registry: Registry, caller: &Caller, model: OpenAiChat) {
    let agent = Agent::builder(registry, model)
        .system(
            "You edit a notebook with tools. Code cells are expressions such as `a = 2; a * 3`.",
        )
        .build();
    let mut last = None;
    while let Some(line) = prompt("> ".to_owned()).await {
        let run = match &last {
            Some(id) => agent.follow_up(caller, id, line, Default::default()).await,
            None => agent.run(caller, line).await,
        };
        match run {
            Ok(run) => {
                println!("{}", run.text().unwrap_or("(no answer)"));
                last = Some(run.id().clone());
            }
            Err(error) => println!("the run failed: {error}"),
        }
    }
}
