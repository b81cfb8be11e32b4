//! `toolgate approvals list|approve|deny`: the calls waiting for approval in the configured
//! `state` (shared with `toolgate serve` and any application on the same store), decided with
//! the same rules as everywhere (the approver's role, single use, expiry).

use anstream::{eprintln, println};
use std::path::Path;
use std::process::ExitCode;

use crate::config::{BuildOptions, Built};
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use toolgate::Caller;
use toolgate::approval::PendingCall;

use crate::failure::Failure;
use crate::output;
use crate::setup::{self, Acting};

#[derive(Subcommand)]
pub enum ApprovalsCommand {
    /// The calls waiting that you may decide.
    List(ListArgs),
    /// Approve a waiting call (it runs once, as the caller who made it).
    Approve(DecideArgs),
    /// Refuse a waiting call, with a reason the model reads.
    Deny(DenyArgs),
}

#[derive(Args)]
pub struct ListArgs {
    #[command(flatten)]
    acting: Acting,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct DecideArgs {
    /// The ticket's id (from `approvals list`) or the ticket.
    ticket: String,
    #[command(flatten)]
    acting: Acting,
}

#[derive(Args)]
pub struct DenyArgs {
    #[command(flatten)]
    decide: DecideArgs,
    /// Why (the model reads it).
    #[arg(long, default_value = "denied by an approver")]
    reason: String,
}

pub async fn run(config: &Path, command: ApprovalsCommand) -> Result<ExitCode, Failure> {
    let (config, built) = setup::load(config, BuildOptions::default()).await?;
    if !config.shares_state() {
        eprintln!(
            "{} state is `memory`: only this process's calls are kept; set `state = \"sqlite:state.db\"` (or postgres://...) to share approvals with `toolgate serve`",
            output::warn("note:")
        );
    }
    match command {
        ApprovalsCommand::List(args) => list(&built, args).await,
        ApprovalsCommand::Approve(args) => {
            let (approver, ticket) = find(&built, &args).await?;
            let outcome = built
                .registry
                .approve(&ticket, &approver)
                .await
                .map_err(|error| Failure::failed(error.to_string()))?;
            report(outcome)
        }
        ApprovalsCommand::Deny(args) => {
            let (approver, ticket) = find(&built, &args.decide).await?;
            let outcome = built
                .registry
                .deny(&ticket, &approver, &args.reason)
                .await
                .map_err(|error| Failure::failed(error.to_string()))?;
            report(outcome)
        }
    }
}

fn approver(built: &Built, acting: &Acting) -> Result<Caller, Failure> {
    acting.caller(built, &built.approver_role)
}

async fn pending(built: &Built, approver: &Caller) -> Result<Vec<PendingCall>, Failure> {
    built
        .registry
        .pending_approvals(approver)
        .await
        .map_err(|error| Failure::failed(error.to_string()))
}

async fn list(built: &Built, args: ListArgs) -> Result<ExitCode, Failure> {
    let approver = approver(built, &args.acting)?;
    let calls = pending(built, &approver).await?;
    if args.json {
        let shown: Vec<Value> = calls.iter().map(|call| json!({
            "ticket_id": call.ticket_id, "tool": call.tool, "caller": call.caller.id(), "role": call.caller.role(),
            "arguments": call.arguments, "reason": call.reason, "expires": call.expires, "review": call.review,
        })).collect();
        output::json(&Value::Array(shown));
        return Ok(ExitCode::SUCCESS);
    }
    if calls.is_empty() {
        println!(
            "no calls are waiting for approval by \"{}\"",
            approver.role()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = calls
        .iter()
        .map(|call| {
            vec![
                call.ticket_id.clone(),
                call.tool.clone(),
                format!("{} ({})", call.caller.id(), call.caller.role()),
                call.arguments.to_string(),
                call.reason.clone(),
            ]
        })
        .collect();
    output::table(&["TICKET", "TOOL", "CALLER", "ARGUMENTS", "REASON"], &rows);
    Ok(ExitCode::SUCCESS)
}

/// The approver, and the ticket named by its id (or given whole).
async fn find(built: &Built, args: &DecideArgs) -> Result<(Caller, String), Failure> {
    let approver = approver(built, &args.acting)?;
    let calls = pending(built, &approver).await?;
    let waiting = calls
        .into_iter()
        .find(|call| call.ticket_id == args.ticket || call.ticket == args.ticket);
    match waiting {
        Some(call) => Ok((approver, call.ticket)),
        // A whole ticket goes to the registry, which says what became of it.
        None if args.ticket.contains('.') => Ok((approver, args.ticket.clone())),
        None => Err(Failure::failed(format!(
            "no call waiting for approval has the id `{}`: it was decided already, or has expired, \
             or is not yours to decide; `toolgate approvals list` shows what waits",
            args.ticket
        ))),
    }
}

fn report(outcome: toolgate::ToolOutcome) -> Result<ExitCode, Failure> {
    match outcome.result {
        Ok(value) => {
            println!("{} `{}` ran", output::good("approved:"), outcome.tool);
            output::json(&value);
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            println!(
                "`{}`: {}: {}",
                outcome.tool,
                error.code.as_str(),
                error.message
            );
            Ok(ExitCode::from(
                if error.code == toolgate::ErrorCode::ApprovalDenied {
                    0
                } else {
                    1
                },
            ))
        }
    }
}
