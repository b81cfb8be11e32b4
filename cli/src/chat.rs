//! `toolgate chat`: a conversation with the `[model]` of the config, which calls the tools
//! the caller's role allows; risky calls are asked on the terminal. With a message, one
//! answer; without, a conversation read line by line from stdin.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::BuildOptions;
use anstream::{eprintln, println};
use clap::Args;
use toolgate::Caller;
use toolgate::agent::{Agent, Run, RunOptions, RunStatus};
use toolgate::approval::Approver;

use crate::approve::TerminalApprover;
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
    let shown = match args.message.is_empty() {
        true => converse(&agent, &caller).await,
        false => {
            let run = agent
                .run(&caller, args.message.join(" "))
                .await
                .map_err(|error| Failure::failed(error.to_string()))?;
            Ok(show(&run, 0))
        }
    };
    setup::send_telemetry(&built).await;
    shown
}

/// One message a line until stdin ends.
async fn converse(agent: &Agent, caller: &Caller) -> Result<ExitCode, Failure> {
    let mut last: Option<Run> = None;
    let mut code = ExitCode::SUCCESS;
    loop {
        eprint_prompt();
        let Some(line) = tokio::task::spawn_blocking(read_line).await.ok().flatten() else {
            return Ok(code);
        };
        if line.trim().is_empty() {
            continue;
        }
        let run = match &last {
            Some(run) => {
                agent
                    .follow_up(caller, run.id(), line, RunOptions::default())
                    .await
            }
            None => agent.run(caller, line).await,
        }
        .map_err(|error| Failure::failed(error.to_string()))?;
        let shown = last.as_ref().map_or(0, |last| last.calls().len());
        code = show(&run, shown);
        last = Some(run);
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
