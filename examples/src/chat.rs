//! A terminal chat: a model from any OpenAI-compatible server, with the clinic's tools as
//! the chosen role may use them. Shows each call as it happens, asks `[y/N/always]` before
//! risky calls, and takes the slash commands of [`toolgate::agent::commands`] (`/help`,
//! `/tools`, `/tools suggest`, `/tools search WORDS`, `/tool NAME --param value`, ...), the
//! same as `toolgate chat`.
//!
//! ```text
//! cargo run -p toolgate-examples --bin chat -- --base-url http://127.0.0.1:8080/v1 --role staff
//! ```
//! The base URL, key and model also come from `OPENAI_BASE_URL`, `OPENAI_API_KEY` and
//! `OPENAI_MODEL`.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use toolgate::Caller;
use toolgate::agent::commands::{ChatCommands, Handled};
use toolgate::agent::models::OpenAiChat;
use toolgate::agent::{Agent, Example, FreeText, Model, RunId, RunOptions, RunStatus};
use toolgate::events::{Event, EventKind};
use toolgate_examples::clinic::{Clinic, ROLES, agent_builder, registry_builder};
use toolgate_examples::terminal::{ask_in_terminal, prompt};

#[derive(Parser)]
#[command(about = "Chat with a model that uses the clinic's tools")]
struct Options {
    /// The OpenAI-compatible server (its `/v1`).
    #[arg(
        long,
        env = "OPENAI_BASE_URL",
        default_value = "http://127.0.0.1:8080/v1"
    )]
    base_url: String,
    /// The API key, if the server wants one.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// The model's name.
    #[arg(long, env = "OPENAI_MODEL", default_value = "default")]
    model: String,
    /// Your role: public, customer, staff or admin.
    #[arg(long, default_value = "customer")]
    role: String,
    /// Most tokens per answer.
    #[arg(long, default_value_t = 512)]
    max_tokens: u32,
    /// Stream the model's answers.
    #[arg(long)]
    stream: bool,
    /// For models without native tool calling: describe the tools in the prompt.
    #[arg(long)]
    free_text: bool,
    /// The clinic's database file.
    #[arg(long, default_value = "clinic.db")]
    database: PathBuf,
    /// Example exchanges shown to the model before the conversation: a JSON file holding a
    /// list of `{"user", "calls": [{"tool", "arguments", "result"}], "answer"}` (small
    /// models learn from them how a tool is called).
    #[arg(long)]
    examples: Option<PathBuf>,
}

/// The examples of `--examples`, if given.
fn examples(options: &Options) -> Result<Vec<Example>, Box<dyn std::error::Error + Send + Sync>> {
    let Some(path) = &options.examples else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("--examples {}: {error}", path.display()))?;
    serde_json::from_str(&text).map_err(|error| {
        format!(
            "--examples {} (line {}): {error}; write a list of {{\"user\", \"calls\": [{{\"tool\", \"arguments\", \"result\"}}], \"answer\"}}",
            path.display(),
            error.line()
        )
        .into()
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let options = Options::parse();
    if !ROLES.contains(&options.role.as_str()) {
        return Err(format!("unknown role `{}`; use one of {ROLES:?}", options.role).into());
    }
    let clinic = Arc::new(Clinic::open(&options.database)?);
    let registry = registry_builder(clinic)
        .approver("terminal", ask_in_terminal)
        .build()?;
    let caller = Caller::new("terminal-user", options.role.as_str());
    let mut builder = agent_builder(registry.clone(), model(&options));
    for example in examples(&options)? {
        builder = builder.example(example);
    }
    let agent = builder.build();
    tokio::spawn(show_events(registry.events(), options.stream));
    println!(
        "chatting as {} with {} at {} (/help for the commands)",
        options.role, options.model, options.base_url
    );
    let commands = ChatCommands::new();
    let mut run_id: Option<RunId> = None;
    let mut said = String::new();
    while let Some(line) = prompt("\n> ".into()).await {
        if line.trim().is_empty() {
            continue;
        }
        match commands.handle(&registry, &caller, &said, &line).await {
            Handled::Quit => break,
            Handled::Reply(text) => println!("{text}"),
            Handled::Message(message) => {
                said.push_str(&message);
                said.push('\n');
                run_id = Some(converse(&agent, &caller, run_id.as_ref(), &message).await);
            }
        }
    }
    Ok(())
}

fn model(options: &Options) -> Box<dyn Model> {
    let mut model = OpenAiChat::new(&options.base_url, &options.model)
        .param("max_tokens", options.max_tokens)
        .stream(options.stream);
    if let Some(key) = &options.api_key {
        model = model.api_key(key);
    }
    if options.free_text {
        Box::new(FreeText::new(model))
    } else {
        Box::new(model)
    }
}

/// One user message: a new run, or the next message of the conversation.
async fn converse(agent: &Agent, caller: &Caller, run: Option<&RunId>, message: &str) -> RunId {
    let result = match run {
        Some(id) => {
            agent
                .follow_up(caller, id, message, RunOptions::default())
                .await
        }
        None => agent.run(caller, message).await,
    };
    let run = match result {
        Ok(run) => run,
        Err(error) => {
            println!("(could not go on: {error}; starting afresh)");
            match agent.run(caller, message).await {
                Ok(run) => run,
                Err(error) => {
                    println!("(failed: {error})");
                    return RunId::new();
                }
            }
        }
    };
    match run.status() {
        RunStatus::Finished { text } => println!("\n{text}"),
        RunStatus::ModelFailed { error } => println!("\n(the model failed: {error})"),
        other => println!("\n(the run stopped: {other})"),
    }
    run.id().clone()
}

/// Prints the model's calls as they happen (and its text as it streams).
async fn show_events(mut events: tokio::sync::broadcast::Receiver<Arc<Event>>, stream: bool) {
    while let Ok(event) = events.recv().await {
        if event.run.is_none() {
            continue; // a `/tool` command, printed where it is run
        }
        match &event.kind {
            EventKind::CallRequested {
                tool, arguments, ..
            } => println!("  → {tool} {arguments}"),
            EventKind::CallFinished {
                tool,
                result: Some(result),
                ..
            } => {
                println!("  ← {tool}: {}", shorten(&result.to_string()));
            }
            EventKind::CallFinished {
                tool,
                error: Some(error),
                ..
            } => {
                println!("  ← {tool} failed: {}", shorten(&error.message));
            }
            EventKind::TextDelta { text, .. } if stream => print!("{text}"),
            _ => {}
        }
    }
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
