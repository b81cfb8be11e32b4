//! `toolgate audit verify FILE` and `toolgate audit tail [-f]`.

use anstream::println;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use toolgate::audit::{VerifiedLog, verify_log};

use crate::config::BuildOptions;
use crate::failure::Failure;
use crate::output;
use crate::setup;

#[derive(Subcommand)]
pub enum AuditCommand {
    /// Check an audit file's hash chain: every record intact, none removed or reordered.
    Verify(VerifyArgs),
    /// The last records of the configured audit file.
    Tail(TailArgs),
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The audit file (default: the config's `audit_file`, or else the audit kept in its
    /// `state` database).
    file: Option<PathBuf>,
    /// A last hash an earlier `verify` printed: it must still be in the chain, else records
    /// were cut off its end since (a file's chain cannot tell that by itself).
    #[arg(long, value_name = "HASH")]
    expect: Option<String>,
}

#[derive(Args)]
pub struct TailArgs {
    /// How many records.
    #[arg(short = 'n', long, default_value_t = 20)]
    lines: usize,
    /// Keep printing records as they are written.
    #[arg(short, long)]
    follow: bool,
    /// Print the records as JSON lines.
    #[arg(long)]
    json: bool,
    /// Read one caller's records from the `state` database instead of the audit file.
    #[arg(long, value_name = "CALLER_ID", conflicts_with = "follow")]
    caller: Option<String>,
}

pub async fn run(config: &Path, command: AuditCommand) -> Result<ExitCode, Failure> {
    match command {
        AuditCommand::Verify(args) => {
            let file = match args.file {
                Some(file) => file,
                None if has_audit_file(config)? => audit_file(config)?,
                None if args.expect.is_some() => {
                    return Err(Failure::usage(
                        "--expect checks an audit file; a state database's chain keeps its own \
                         end, and `toolgate audit verify` finds records cut from it without help",
                    ));
                }
                None => return verify_store(config).await,
            };
            match verify_log(&file) {
                Ok(log) => verified_file(&file, &log, args.expect.as_deref()),
                Err(problem) => Err(Failure::failed(format!("{}: {problem}", file.display()))),
            }
        }
        AuditCommand::Tail(args) => match args.caller.clone() {
            Some(caller) => tail_store(config, &caller, args).await,
            None => tail(&audit_file(config)?, args).await,
        },
    }
}

/// Reports a file's intact chain, or that the hash noted earlier is no longer in it.
fn verified_file(
    file: &Path,
    log: &VerifiedLog,
    expect: Option<&str>,
) -> Result<ExitCode, Failure> {
    let after_noted = match expect {
        None => None,
        Some(noted) => match log.hashes.iter().position(|hash| hash == noted.trim()) {
            Some(at) => Some(log.hashes.len() - at - 1),
            None => {
                return Err(Failure::failed(format!(
                    "{}: the hash you noted is not in the chain: records were cut off its end \
                     (or the file was replaced); it now ends at {} after {} records",
                    file.display(),
                    log.last_hash,
                    log.records.len()
                )));
            }
        },
    };
    let torn = if log.torn_tail {
        " (a torn last line, from a crash mid-write, was left out)"
    } else {
        ""
    };
    println!(
        "{} {} records, chain intact; last hash {}{torn}",
        output::good("ok:"),
        log.records.len(),
        log.last_hash,
    );
    if let Some(added) = after_noted {
        println!("the hash you noted is there, with {added} records after it");
    }
    Ok(ExitCode::SUCCESS)
}

fn has_audit_file(config: &Path) -> Result<bool, Failure> {
    Ok(setup::read(config)?.file.audit_file.is_some())
}

/// The registry of a config whose audit is kept in its `state` database.
async fn with_store(config: &Path) -> Result<toolgate::Registry, Failure> {
    let options = BuildOptions {
        skip_mcp: true,
        skip_tool_files: true,
        ..BuildOptions::default()
    };
    let (config, built) = setup::load(config, options).await?;
    if !config.shares_state() {
        return Err(Failure::usage(format!(
            "{} keeps the audit nowhere to read: set `audit_file`, or a `state` database",
            config.path().display()
        )));
    }
    Ok(built.registry)
}

async fn verify_store(config: &Path) -> Result<ExitCode, Failure> {
    let registry = with_store(config).await?;
    match registry.verify_audit().await {
        Ok(Ok(chain)) => {
            println!(
                "{} {} records in the state database, chain intact; last hash {}",
                output::good("ok:"),
                chain.records,
                chain.last_hash.as_deref().unwrap_or("-")
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(broken)) => Err(Failure::failed(format!(
            "the audit in the state database: {broken}"
        ))),
        Err(error) => Err(Failure::failed(error.to_string())),
    }
}

async fn tail_store(config: &Path, caller: &str, args: TailArgs) -> Result<ExitCode, Failure> {
    let registry = with_store(config).await?;
    let records = registry
        .history(caller, args.lines)
        .await
        .map_err(|error| Failure::failed(error.to_string()))?;
    for record in records.iter().rev() {
        let line = serde_json::to_string(record).unwrap_or_default();
        print_record(&format!("{line}\n"), args.json);
    }
    Ok(ExitCode::SUCCESS)
}

fn audit_file(config: &Path) -> Result<PathBuf, Failure> {
    let config = setup::read(config)?;
    match &config.file.audit_file {
        Some(file) => Ok(config.resolve(file)),
        None => Err(Failure::usage(format!(
            "{} sets no `audit_file`; name the file",
            config.path().display()
        ))),
    }
}

async fn tail(file: &Path, args: TailArgs) -> Result<ExitCode, Failure> {
    let opened = std::fs::File::open(file).map_err(|error| {
        Failure::failed(format!("`{}` cannot be read: {error}", file.display()))
    })?;
    let mut reader = BufReader::new(opened);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    while reader
        .read_line(&mut line)
        .map_err(|error| Failure::failed(error.to_string()))?
        > 0
    {
        if line.ends_with('\n') {
            lines.push(std::mem::take(&mut line));
        }
    }
    for record in &lines[lines.len().saturating_sub(args.lines)..] {
        print_record(record, args.json);
    }
    if !args.follow {
        return Ok(ExitCode::SUCCESS);
    }
    // Follow: read what is appended, a whole line at a time.
    let mut position = reader
        .stream_position()
        .map_err(|error| Failure::failed(error.to_string()))?
        - line.len() as u64;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut opened =
            std::fs::File::open(file).map_err(|error| Failure::failed(error.to_string()))?;
        if opened.metadata().map(|m| m.len()).unwrap_or(0) < position {
            position = 0; // the file was replaced
        }
        opened
            .seek(SeekFrom::Start(position))
            .map_err(|error| Failure::failed(error.to_string()))?;
        let mut reader = BufReader::new(opened);
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 && line.ends_with('\n') {
            position += line.len() as u64;
            print_record(&line, args.json);
            line.clear();
        }
    }
}

fn print_record(line: &str, json: bool) {
    if json {
        print!("{line}");
        return;
    }
    let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else {
        println!("{}", line.trim_end());
        return;
    };
    let text = |key: &str| record[key].as_str().unwrap_or("-").to_owned();
    let seconds = record["time_ms"].as_u64().unwrap_or(0) / 1000;
    println!(
        "{} {} ({}) {} {} → {} {:.1} ms",
        humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(seconds)),
        text("caller"),
        text("role"),
        text("tool"),
        text("decision"),
        text("outcome"),
        record["duration_ms"].as_f64().unwrap_or(0.0),
    );
}
