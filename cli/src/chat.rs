//! `toolgate chat`: a conversation with the `[model]` of the config, which calls the tools
//! the caller's role allows; risky calls are asked on the terminal. With a message, one
//! answer; without, a conversation read line by line from stdin. Slash commands (`/help`,
//! `/tools`, `/tool NAME --param value`, `/mcp status`, ...) are answered here, never sent
//! to the model.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::BuildOptions;
use anstream::{eprintln, println};
use clap::Args;
use toolgate::Caller;
use toolgate::agent::commands::{ChatCommands, Handled};
use toolgate::agent::{Agent, Run, RunOptions, RunStatus};
use toolgate::approval::Approver;

use crate::approve::TerminalApprover;
use crate::config::Built;
use crate::failure::Failure;
use crate::output;
use crate::setup::{self, Acting};

#[derive(Args)]
pub struct ChatArgs {
    /// The message (without one, each line of stdin is a message).
    message: Vec<String>,
    /// Who is chatting (default: the lowest role).
    #[command(flatten)]
    acting: Acting,
}

pub async fn run(config: &Path, args: ChatArgs) -> Result<ExitCode, Failure> {
    let approver: Arc<dyn Approver> = Arc::new(TerminalApprover);
    let options = BuildOptions {
        approver: Some(approver),
        ..BuildOptions::default()
    };
    let (config, built) = setup::load(config, options).await?;
    let Some(agent) = config.agent(built.registry.clone())? else {
        return Err(Failure::usage(format!(
            "{} has no [model]; add one (api, url, name) to chat",
            config.path().display()
        )));
    };
    let lowest = setup::lowest_role(&built);
    let caller = args.acting.caller(&built, &lowest)?;
    let chat = Chat {
        agent: &agent,
        built: &built,
        caller: &caller,
        commands: commands(&built),
    };
    let shown = match args.message.is_empty() {
        true => chat.converse().await,
        false => chat.once(&args.message.join(" ")).await,
    };
    setup::send_telemetry(&built).await;
    shown
}

/// The slash commands, `/mcp status` telling of the config's imports.
fn commands(built: &Built) -> ChatCommands {
    let imports: Vec<String> = built
        .imports
        .iter()
        .map(|import| match &import.outcome {
            Ok(tools) => format!(
                "{}: connected, {tools} tools ({})",
                import.name, import.address
            ),
            Err(error) => format!(
                "{}: not connected ({}): {error}",
                import.name, import.address
            ),
        })
        .collect();
    ChatCommands::new().mcp_status(move || match imports.is_empty() {
        true => vec!["no MCP servers are configured ([[mcp]] in toolgate.toml)".to_owned()],
        false => imports.clone(),
    })
}

/// One person's chat.
struct Chat<'a> {
    agent: &'a Agent,
    built: &'a Built,
    caller: &'a Caller,
    commands: ChatCommands,
}

impl Chat<'_> {
    /// One line given on the command line: a command's answer, or one run.
    async fn once(&self, line: &str) -> Result<ExitCode, Failure> {
        match self.handle("", line).await {
            Handled::Message(message) => {
                let run = self
                    .agent
                    .run(self.caller, message)
                    .await
                    .map_err(|error| Failure::failed(error.to_string()))?;
                Ok(show(&run, 0))
            }
            Handled::Reply(_) | Handled::Quit => Ok(ExitCode::SUCCESS),
        }
    }

    /// A command is answered (printed) here; a message is returned for the model.
    async fn handle(&self, said: &str, line: &str) -> Handled {
        let registry = &self.built.registry;
        let handled = self
            .commands
            .handle(registry, self.caller, said, line)
            .await;
        if let Handled::Reply(text) = &handled {
            println!("{text}");
        }
        handled
    }
    /// One message a line until stdin ends (or `/quit`).
    async fn converse(&self) -> Result<ExitCode, Failure> {
        let mut last: Option<Run> = None;
        let mut said = String::new();
        let mut code = ExitCode::SUCCESS;
        loop {
            eprint_prompt();
            let Some(line) = tokio::task::spawn_blocking(read_line).await.ok().flatten() else {
                return Ok(code);
            };
            if line.trim().is_empty() {
                continue;
            }
            let message = match self.handle(&said, &line).await {
                Handled::Message(message) => message,
                Handled::Reply(_) => continue,
                Handled::Quit => return Ok(code),
            };
            said.push_str(&message);
            said.push('\n');
            let run = match &last {
                Some(run) => {
                    let options = RunOptions::default();
                    self.agent
                        .follow_up(self.caller, run.id(), message, options)
                        .await
                }
                None => self.agent.run(self.caller, message).await,
            }
            .map_err(|error| Failure::failed(error.to_string()))?;
            let shown = last.as_ref().map_or(0, |last| last.calls().len());
            code = show(&run, shown);
            last = Some(run);
        }
    }
}

fn eprint_prompt() {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "> ");
    let _ = err.flush();
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// The tools called since `shown` calls (on stderr) and the answer (on stdout); the exit
/// code of how it ended.
fn show(run: &Run, shown: usize) -> ExitCode {
    for call in run.calls().iter().skip(shown) {
        let outcome = match &call.result {
            Ok(_) => output::good("ok"),
            Err(error) => output::warn(error.code.as_str()),
        };
        eprintln!(
            "{} {}({}) → {outcome}",
            output::bold("tool:"),
            call.tool,
            call.arguments
        );
    }
    if let Some(text) = run.text() {
        println!("{text}");
    }
    match run.status() {
        RunStatus::Finished { .. } => ExitCode::SUCCESS,
        RunStatus::ModelFailed { error } => {
            eprintln!(
                "{}",
                output::error_line(&format!("the model failed: {error}"))
            );
            ExitCode::from(1)
        }
        other => {
            eprintln!(
                "{}",
                output::error_line(&format!("the run stopped: {other}"))
            );
            ExitCode::from(1)
        }
    }
}
