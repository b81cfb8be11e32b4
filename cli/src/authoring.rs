//! `toolgate tools new` and `toolgate tools validate`: writing and checking tool files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::config::BuildOptions;
use anstream::println;
use clap::{Args, ValueEnum};
use toolgate_tools::file_tools::{FileTools, load_file, register_file_tool, tool_files};

use crate::failure::Failure;
use crate::output;
use crate::setup;
use crate::starter;

#[derive(Clone, Copy, ValueEnum)]
pub enum Kind {
    /// Runs a program that reads the arguments as JSON on stdin.
    Command,
    /// Sends an HTTP request.
    Http,
}

#[derive(Args)]
pub struct NewArgs {
    /// The tool's name.
    pub name: String,
    /// How it runs.
    #[arg(long, value_enum, default_value = "command")]
    kind: Kind,
    /// The folder to write it in (default: the first tool folder of the config, or
    /// `.toolgate/tools`).
    #[arg(long)]
    folder: Option<PathBuf>,
}

#[derive(Args)]
pub struct ValidateArgs {
    /// A tool file or a folder of them.
    path: Option<PathBuf>,
}

pub fn new(config: &Path, args: NewArgs) -> Result<ExitCode, Failure> {
    if !toolgate::is_valid_tool_name(&args.name) {
        return Err(Failure::usage(format!(
            "{:?} is not a tool name: use 1 to 64 ASCII letters, digits, `_`, `-`, `.` or `/`",
            args.name
        )));
    }
    // In an empty folder, a config comes first (else the next commands could not work).
    if !config.exists() {
        for path in crate::init::write_config(config)? {
            crate::init::say_written(
                &path,
                " (no config was here; `toolgate init` writes the same)",
            );
        }
    }
    // The lowest role of the config (anyone may call the starter), and its first tool folder.
    let config = setup::read(config)?;
    let permission = config
        .file
        .roles
        .get_ref()
        .first()
        .cloned()
        .unwrap_or_else(|| "public".to_owned());
    let folder = args.folder.unwrap_or_else(|| {
        config
            .tool_folders()
            .into_iter()
            .next()
            .unwrap_or_else(|| FileTools::project_folder(&config.folder()))
    });
    let written = starter::write(&folder, &args.name, args.kind, &permission)?;
    for path in &written {
        println!("wrote {}", path.display());
    }
    println!(
        "check it with `toolgate tools validate {}`; call it with `toolgate call {} --text hello`",
        written[0].display(),
        args.name
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn validate(config: &Path, args: ValidateArgs) -> Result<ExitCode, Failure> {
    let options = BuildOptions {
        skip_mcp: true,
        skip_tool_files: true,
        ..BuildOptions::default()
    };
    let (config, built) = setup::load(config, options).await?;
    let files = match &args.path {
        Some(path) if path.is_file() => vec![path.clone()],
        Some(path) if path.is_dir() => tool_files(std::slice::from_ref(path)),
        Some(path) => {
            return Err(Failure::usage(format!(
                "`{}` is neither a file nor a folder",
                path.display()
            )));
        }
        None => tool_files(&config.tool_folders()),
    };
    if files.is_empty() {
        println!("no tool files (*.md, *.toml) found");
        return Ok(ExitCode::SUCCESS);
    }
    let mut settings = built.file_tools.clone();
    settings.folders = Vec::new();
    let mut broken = 0;
    for file in &files {
        match load_file(file, &settings).and_then(|tool| register_file_tool(&built.registry, tool))
        {
            Ok(tool) => println!(
                "{} {} ({}, {})",
                output::good("ok"),
                tool.file().display(),
                toolgate::Tool::definition(&tool).name,
                tool.kind()
            ),
            Err(problem) => {
                broken += 1;
                println!("{} {problem}", output::warn("problem"));
            }
        }
    }
    if broken > 0 {
        return Err(Failure::failed(format!(
            "{broken} of {} tool files have problems",
            files.len()
        )));
    }
    Ok(ExitCode::SUCCESS)
}
