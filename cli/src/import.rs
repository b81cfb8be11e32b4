//! `toolgate tools import-openapi SPEC --source NAME`: a tool file per operation of an
//! OpenAPI 3.0/3.1 document, and the API's address and authentication as `[sources.NAME]`
//! in the config, which the tools share.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anstream::println;
use clap::Args;
use toolgate_tools::file_tools::openapi::{self, Imported};
use toolgate_tools::file_tools::{FileTools, HttpSource};

use crate::failure::Failure;
use crate::output;
use crate::setup;

#[derive(Args)]
pub struct ImportArgs {
    /// The OpenAPI document (JSON or YAML).
    spec: PathBuf,
    /// The source's name, which the tools name (`[sources.NAME]`).
    #[arg(long)]
    source: String,
    /// The API's address (default: the document's first server).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The role the tools need (default: the config's lowest).
    #[arg(long, value_name = "ROLE")]
    permission: Option<String>,
    /// The folder to write the tools in (default: the first tool folder of the config).
    #[arg(long)]
    folder: Option<PathBuf>,
}

pub fn run(config_path: &Path, args: ImportArgs) -> Result<ExitCode, Failure> {
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if args.source.is_empty() || !args.source.chars().all(valid) {
        return Err(Failure::usage(format!(
            "--source {:?}: use letters, digits, `_` and `-`",
            args.source
        )));
    }
    let config = setup::read(config_path)?;
    let text = std::fs::read_to_string(&args.spec).map_err(|error| {
        Failure::usage(format!("`{}` cannot be read: {error}", args.spec.display()))
    })?;
    let roles = config.file.roles.get_ref();
    let permission = args
        .permission
        .clone()
        .or_else(|| roles.first().cloned())
        .unwrap_or_default();
    let mut imported = openapi::import(&text, &args.source, &permission)
        .map_err(|why| Failure::usage(format!("{}: {why}", args.spec.display())))?;
    if let Some(url) = &args.base_url {
        imported.source.url = url.clone();
    }
    if imported.source.url.is_empty() {
        return Err(Failure::usage(format!(
            "{} names no absolute server URL; give the API's address with --base-url",
            args.spec.display()
        )));
    }
    let folder = args.folder.clone().unwrap_or_else(|| {
        let first = config.tool_folders().into_iter().next();
        first.unwrap_or_else(|| FileTools::project_folder(&config.folder()))
    });
    write_tools(&folder, &imported)?;
    if config.file.sources.contains_key(&args.source) {
        println!(
            "[sources.{}] is in {} already: kept as it is",
            args.source,
            config_path.display()
        );
    } else {
        append_source(config_path, &args.source, &imported.source)?;
        println!(
            "added [sources.{}] to {}",
            args.source,
            config_path.display()
        );
    }
    for why in &imported.skipped {
        println!("{} {why}", output::warn("left out:"));
    }
    say_secrets(&imported.source);
    println!(
        "check them with `toolgate tools validate {}`",
        folder.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// One file per tool; a file already there is kept (and said).
fn write_tools(folder: &Path, imported: &Imported) -> Result<(), Failure> {
    std::fs::create_dir_all(folder).map_err(|error| {
        Failure::failed(format!("`{}` cannot be created: {error}", folder.display()))
    })?;
    for tool in &imported.tools {
        let path = folder.join(format!("{}.md", tool.name));
        if path.exists() {
            println!(
                "{} `{}` exists: kept, not replaced",
                output::warn("kept:"),
                path.display()
            );
            continue;
        }
        std::fs::write(&path, &tool.text).map_err(|error| {
            Failure::failed(format!("`{}` cannot be written: {error}", path.display()))
        })?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `[sources.NAME]` added at the end of the config, its values quoted as TOML quotes them.
fn append_source(config: &Path, name: &str, source: &HttpSource) -> Result<(), Failure> {
    let quoted = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let mut table = format!("\n[sources.{name}]\nurl = {}\n", quoted(&source.url));
    if let Some(variable) = &source.bearer_env {
        let _ = writeln!(table, "bearer_env = {}", quoted(variable));
    }
    if !source.headers.is_empty() {
        let pairs: Vec<String> = source
            .headers
            .iter()
            .map(|(header, value)| format!("{} = {}", quoted(header), quoted(value)))
            .collect();
        let _ = writeln!(table, "headers = {{ {} }}", pairs.join(", "));
    }
    let mut text = std::fs::read_to_string(config).map_err(|error| {
        Failure::failed(format!("`{}` cannot be read: {error}", config.display()))
    })?;
    text.push_str(&table);
    std::fs::write(config, text).map_err(|error| {
        Failure::failed(format!("`{}` cannot be written: {error}", config.display()))
    })
}

/// Which variables must hold the API's secrets.
fn say_secrets(source: &HttpSource) {
    let headers = source.all_headers();
    let variables: Vec<String> = headers
        .values()
        .flat_map(|value| toolgate_tools::file_tools::variable_names(value))
        .map(str::to_owned)
        .collect();
    if !variables.is_empty() {
        println!(
            "set {} before calling the tools (the secrets are read from the environment)",
            variables.join(", ")
        );
    }
}
