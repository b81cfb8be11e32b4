//! `toolgate stats [--days 7] [--json]`: what the tools were used for, counted from the
//! audit trail (the config's `audit_file`, or else its `state` database): per tool and per
//! role, calls, errors by code, p50/p95 duration, approvals, last use; the unused tools.

use anstream::println;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use toolgate::audit::{UsageFigures, UsageReport, verify_log};

use crate::config::BuildOptions;
use crate::failure::Failure;
use crate::output;
use crate::setup::{self, Acting};

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

#[derive(Args)]
pub struct StatsArgs {
    /// How many days back from now.
    #[arg(long, default_value_t = 7)]
    days: u64,
    /// The report as JSON.
    #[arg(long)]
    json: bool,
    /// Whose view (default: the highest role, which sees every tool).
    #[command(flatten)]
    acting: Acting,
}

pub async fn run(config: &Path, args: StatsArgs) -> Result<ExitCode, Failure> {
    let (config, built) = setup::load(config, BuildOptions::default()).await?;
    let viewer = args.acting.caller(&built, &setup::top_role(&built))?;
    let until = toolgate_now_ms();
    let since = until.saturating_sub(args.days.max(1) * DAY_MS);
    let report = match &config.file.audit_file {
        Some(file) => {
            let file = config.resolve(file);
            let log = verify_log(&file).map_err(|problem| {
                Failure::failed(format!(
                    "{}: {problem} (see `toolgate audit verify`)",
                    file.display()
                ))
            })?;
            built.registry.usage_of(&viewer, log.records, since, until)
        }
        None if config.shares_state() => built
            .registry
            .usage(&viewer, since, until)
            .await
            .map_err(|error| Failure::failed(error.to_string()))?,
        None => {
            return Err(Failure::usage(format!(
                "{} keeps no audit trail to count: set `audit_file` or a `state` database",
                config.path().display()
            )));
        }
    };
    if args.json {
        output::json(&serde_json::to_value(&report).unwrap_or_default());
    } else {
        show(&report, args.days);
    }
    Ok(ExitCode::SUCCESS)
}

fn toolgate_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}

fn show(report: &UsageReport, days: u64) {
    println!("{} calls in the last {days} days", report.calls);
    let headers = [
        "TOOL",
        "CALLS",
        "OK",
        "ERRORS",
        "P50",
        "P95",
        "ASKED",
        "GRANTED",
        "REFUSED",
        "EXPIRED",
        "LAST USED",
    ];
    output::table(
        &headers,
        &report.by_tool.iter().map(row).collect::<Vec<_>>(),
    );
    println!();
    let mut by_role = headers;
    by_role[0] = "ROLE";
    output::table(
        &by_role,
        &report.by_role.iter().map(row).collect::<Vec<_>>(),
    );
    if !report.unused.is_empty() {
        println!("\nnot used: {}", report.unused.join(", "));
    }
}

fn row(figures: &UsageFigures) -> Vec<String> {
    let ms = |value: Option<f64>| value.map_or("-".to_owned(), |ms| format!("{ms:.1} ms"));
    let errors: Vec<String> = figures
        .errors
        .iter()
        .map(|(code, n)| format!("{code} {n}"))
        .collect();
    let approvals = figures.approvals;
    let last = figures.last_used_ms.map_or("-".to_owned(), |ms| {
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        humantime::format_rfc3339_seconds(when).to_string()
    });
    vec![
        figures.name.clone(),
        figures.calls.to_string(),
        figures.ok.to_string(),
        if errors.is_empty() {
            "-".to_owned()
        } else {
            errors.join(", ")
        },
        ms(figures.p50_ms),
        ms(figures.p95_ms),
        approvals.asked.to_string(),
        approvals.granted.to_string(),
        approvals.refused.to_string(),
        approvals.expired.to_string(),
        last,
    ]
}
