//! `toolgate tools ...` and `toolgate search`.

use anstream::println;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use crate::config::BuildOptions;
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use toolgate::{Caller, ToolDefinition};

use crate::authoring;
use crate::failure::Failure;
use crate::output;
use crate::setup::{self, Acting};

#[derive(Subcommand)]
pub enum ToolsCommand {
    /// The tools, with their permission, group and risk.
    List(ListArgs),
    /// One tool: its description, schema, permission, risk and hints.
    Info(InfoArgs),
    /// The groups, with how many tools each has.
    Groups(ListArgs),
    /// Which roles may use which tools, and the standing "always" grants.
    Permissions(JsonArg),
    /// Write a working starter tool file.
    New(authoring::NewArgs),
    /// Check tool files (default: the configured tool folders).
    Validate(authoring::ValidateArgs),
    /// Write a tool file per operation of an OpenAPI 3.0/3.1 document, and the API as
    /// `[sources.NAME]` in the config.
    ImportOpenapi(crate::import::ImportArgs),
}

#[derive(Args)]
pub struct ListArgs {
    #[command(flatten)]
    acting: Acting,
    /// Only this group.
    #[arg(long)]
    group: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct InfoArgs {
    /// The tool.
    name: String,
    #[command(flatten)]
    acting: Acting,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct JsonArg {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct SearchArgs {
    /// What the tool should do.
    query: String,
    #[command(flatten)]
    acting: Acting,
    /// How many tools.
    #[arg(long, default_value_t = 5)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub async fn run(config: &Path, command: ToolsCommand) -> Result<ExitCode, Failure> {
    match command {
        ToolsCommand::List(args) => list(config, args).await,
        ToolsCommand::Info(args) => info(config, args).await,
        ToolsCommand::Groups(args) => groups(config, args).await,
        ToolsCommand::Permissions(args) => permissions(config, args).await,
        ToolsCommand::New(args) => authoring::new(config, args),
        ToolsCommand::Validate(args) => authoring::validate(config, args).await,
        ToolsCommand::ImportOpenapi(args) => crate::import::run(config, args),
    }
}

/// The tools `caller` sees (by default, everyone's: the highest role's view).
async fn visible(
    config: &Path,
    acting: &Acting,
) -> Result<(Vec<std::sync::Arc<ToolDefinition>>, Caller), Failure> {
    let (_, built) = setup::load(config, BuildOptions::default()).await?;
    let caller = acting.caller(&built, &setup::top_role(&built))?;
    Ok((built.registry.visible_to(&caller).to_vec(), caller))
}

async fn list(config: &Path, args: ListArgs) -> Result<ExitCode, Failure> {
    let (tools, _) = visible(config, &args.acting).await?;
    let tools: Vec<_> = tools
        .into_iter()
        .filter(|tool| {
            args.group
                .as_ref()
                .is_none_or(|group| tool.group.as_ref() == Some(group))
        })
        .collect();
    if args.json {
        output::json(&Value::Array(
            tools.iter().map(|tool| summary(tool)).collect(),
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|tool| {
            vec![
                tool.name.clone(),
                tool.permission.clone(),
                tool.group.clone().unwrap_or_default(),
                tool.risk.to_string(),
                first_line(&tool.description),
            ]
        })
        .collect();
    output::table(
        &["NAME", "PERMISSION", "GROUP", "RISK", "DESCRIPTION"],
        &rows,
    );
    Ok(ExitCode::SUCCESS)
}

fn summary(tool: &ToolDefinition) -> Value {
    json!({
        "name": tool.name,
        "title": tool.title,
        "permission": tool.permission,
        "group": tool.group,
        "risk": tool.risk,
        "hints": tool.hints,
        "ui": tool.ui,
        "description": tool.description,
        "source": tool.source.as_ref().map(ToString::to_string),
    })
}

pub(crate) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

async fn info(config: &Path, args: InfoArgs) -> Result<ExitCode, Failure> {
    let (tools, caller) = visible(config, &args.acting).await?;
    let Some(tool) = tools.iter().find(|tool| tool.name == args.name) else {
        return Err(Failure::not_found(format!(
            "no tool `{}` for the role \"{}\"",
            args.name,
            caller.role()
        )));
    };
    let mut shown = summary(tool);
    shown["input_schema"] = tool.input_schema.clone();
    shown["output_schema"] = tool.output_schema.clone().unwrap_or(Value::Null);
    shown["timeout_ms"] = json!(tool.timeout.map(|timeout| timeout.as_millis() as u64));
    if args.json {
        output::json(&shown);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", output::bold(&tool.name));
    if let Some(title) = &tool.title {
        println!("{title}");
    }
    println!("\n{}\n", tool.description);
    let hints = &tool.hints;
    let flags: Vec<&str> = [
        ("read_only", hints.read_only),
        ("destructive", hints.destructive),
        ("idempotent", hints.idempotent),
        ("open_world", hints.open_world),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    println!("{} {}", output::bold("permission:"), tool.permission);
    println!(
        "{} {}",
        output::bold("group:"),
        tool.group.as_deref().unwrap_or("-")
    );
    println!("{} {}", output::bold("risk:"), tool.risk);
    println!(
        "{} {}",
        output::bold("hints:"),
        if flags.is_empty() {
            "-".to_owned()
        } else {
            flags.join(", ")
        }
    );
    if let Some(source) = &tool.source {
        println!("{} {source}", output::bold("defined at:"));
    }
    println!("{}", output::bold("parameters:"));
    println!(
        "{}",
        serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

async fn groups(config: &Path, args: ListArgs) -> Result<ExitCode, Failure> {
    let (tools, _) = visible(config, &args.acting).await?;
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for tool in &tools {
        groups
            .entry(tool.group.clone().unwrap_or_else(|| "(none)".into()))
            .or_default()
            .push(tool.name.clone());
    }
    if args.json {
        output::json(&json!(groups));
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(group, names)| vec![group.clone(), names.len().to_string(), names.join(", ")])
        .collect();
    output::table(&["GROUP", "TOOLS", "NAMES"], &rows);
    Ok(ExitCode::SUCCESS)
}

async fn permissions(config: &Path, args: JsonArg) -> Result<ExitCode, Failure> {
    let (_, built) = setup::load(config, BuildOptions::default()).await?;
    let roles = built.registry.roles().names().to_vec();
    let by_role: Vec<(String, Vec<String>)> = roles
        .iter()
        .map(|role| {
            let caller = Caller::new("cli", role.as_str());
            let names = built
                .registry
                .visible_to(&caller)
                .iter()
                .map(|tool| tool.name.clone())
                .collect();
            (role.clone(), names)
        })
        .collect();
    let grants = built
        .registry
        .grants()
        .await
        .map_err(|error| Failure::failed(error.to_string()))?;
    if args.json {
        output::json(&json!({
            "roles": by_role.iter().map(|(role, tools)| json!({"role": role, "tools": tools})).collect::<Vec<_>>(),
            "approver_role": built.approver_role,
            "grants": grants.iter().map(|grant| json!({"caller": grant.caller, "tool": grant.tool, "granted_by": grant.granted_by, "time_ms": grant.time_ms})).collect::<Vec<_>>(),
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = by_role
        .iter()
        .map(|(role, tools)| vec![role.clone(), tools.len().to_string(), tools.join(", ")])
        .collect();
    output::table(&["ROLE", "TOOLS", "MAY USE"], &rows);
    println!(
        "\n{} {}",
        output::bold("approvals are decided by:"),
        built.approver_role
    );
    if grants.is_empty() {
        println!("{} none", output::bold("standing \"always\" grants:"));
    } else {
        println!("{}", output::bold("standing \"always\" grants:"));
        let rows: Vec<Vec<String>> = grants
            .iter()
            .map(|grant| {
                vec![
                    grant.caller.clone(),
                    grant.tool.clone(),
                    grant.granted_by.clone().unwrap_or_default(),
                ]
            })
            .collect();
        output::table(&["CALLER", "TOOL", "GRANTED BY"], &rows);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn search(config: &Path, args: SearchArgs) -> Result<ExitCode, Failure> {
    let (_, built) = setup::load(config, BuildOptions::default()).await?;
    let caller = args.acting.caller(&built, &setup::top_role(&built))?;
    let hits = built.registry.search(&caller, &args.query, args.limit);
    if args.json {
        output::json(&Value::Array(hits.iter().map(|hit| json!({"name": hit.definition.name, "relevance": hit.relevance, "description": hit.definition.description})).collect()));
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = hits
        .iter()
        .map(|hit| {
            vec![
                hit.definition.name.clone(),
                format!("{:.2}", hit.relevance),
                first_line(&hit.definition.description),
            ]
        })
        .collect();
    output::table(&["NAME", "RELEVANCE", "DESCRIPTION"], &rows);
    Ok(ExitCode::SUCCESS)
}
