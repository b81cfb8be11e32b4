//! `toolgate device --hub URL`: this machine's tools offered to a hub over one outbound link;
//! `toolgate devices list|revoke|token`: a hub's devices, as its HTTP routes give them.

use anstream::{eprintln, println};
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use sha2::{Digest, Sha256};
use toolgate::devices::DeviceLink;

use crate::config::BuildOptions;
use crate::failure::Failure;
use crate::output;
use crate::setup::{self, Acting};

#[derive(Args)]
pub struct DeviceArgs {
    /// The hub's address, e.g. https://hub.example.com (http:// only to this machine).
    #[arg(long, value_name = "URL")]
    hub: String,
    /// The environment variable holding this device's token (from `toolgate devices token`).
    #[arg(long, value_name = "VARIABLE")]
    token_env: String,
    /// The caller the hub's calls run as here (default: the lowest role).
    #[command(flatten)]
    acting: Acting,
    /// Send the token unencrypted to a hub that is not on this machine (a private network
    /// only).
    #[arg(long)]
    allow_plain_text: bool,
}

/// Serves this config's tools to the hub until it refuses the device.
pub async fn link(config: &Path, args: DeviceArgs) -> Result<ExitCode, Failure> {
    crate::serve::init_logging();
    let token = secret(&args.token_env)?;
    let (_config, built) = setup::load(config, BuildOptions::default()).await?;
    let caller = args.acting.caller(&built, &setup::lowest_role(&built))?;
    let seen = built.registry.visible_to(&caller).len();
    eprintln!(
        "offering {seen} tool(s) (as the role \"{}\") to {}; the hub takes those it accepts",
        caller.role(),
        args.hub
    );
    if seen == 0 {
        eprintln!(
            "{} the role \"{}\" sees no tools here: give the hub's calls a role with `--role ROLE`",
            crate::output::warn("nothing to offer:"),
            caller.role()
        );
    }
    let mut link = DeviceLink::new(&args.hub, token, built.registry.clone(), caller);
    if args.allow_plain_text {
        link = link.allow_plain_text();
    }
    let refused = tokio::select! {
        refused = link.run() => refused,
        _ = tokio::signal::ctrl_c() => return Ok(ExitCode::SUCCESS),
    };
    Err(Failure::failed(refused.message))
}

/// `toolgate devices [--hub URL --token-env VAR]` lists; a subcommand does the rest.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DevicesArgs {
    #[command(subcommand)]
    command: Option<DevicesCommand>,
    /// Without a subcommand: list the hub's devices.
    #[command(flatten)]
    list: Option<HubArgs>,
}

#[derive(Subcommand)]
pub enum DevicesCommand {
    /// The hub's devices your role may use: online or not, last seen, their tools.
    List(HubArgs),
    /// Revoke a device's token at the running hub (the highest role only); to keep it
    /// out after a restart, remove or change its token in the hub's toolgate.toml too.
    Revoke {
        /// The device's id.
        id: String,
        #[command(flatten)]
        hub: HubArgs,
    },
    /// A new random device token, and the `token_sha256` line for the hub's config.
    Token,
}

#[derive(Args)]
pub struct HubArgs {
    /// The hub's address, e.g. http://127.0.0.1:8080.
    #[arg(long, value_name = "URL")]
    hub: String,
    /// The environment variable holding your caller token at the hub.
    #[arg(long, value_name = "VARIABLE")]
    token_env: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: DevicesArgs) -> Result<ExitCode, Failure> {
    let command = match (args.command, args.list) {
        (Some(command), _) => command,
        (None, Some(hub)) => DevicesCommand::List(hub),
        (None, None) => {
            return Err(Failure::usage(
                "say which hub: `toolgate devices --hub URL --token-env VARIABLE` (or `devices token`)",
            ));
        }
    };
    match command {
        DevicesCommand::Token => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|error| Failure::failed(error.to_string()))?;
            let token: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
            let digest: String = Sha256::digest(token.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            println!("device token (keep it on the device, e.g. in DEVICE_TOKEN): {token}");
            println!("for the hub's [devices.ID]:  token_sha256 = \"{digest}\"");
            Ok(ExitCode::SUCCESS)
        }
        DevicesCommand::List(hub) => {
            let devices = ask(&hub, reqwest::Method::GET, "devices").await?;
            if hub.json {
                output::json(&devices);
            } else {
                output::table(
                    &["device", "online", "last seen", "permission", "tools"],
                    &rows(&devices),
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        DevicesCommand::Revoke { id, hub } => {
            ask(&hub, reqwest::Method::POST, &format!("devices/{id}/revoke")).await?;
            println!(
                "{} revoked: its link is closed and its token refused",
                output::bold(&id)
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// One of the hub's routes, with the caller's token; its JSON answer, or its error.
async fn ask(
    hub: &HubArgs,
    method: reqwest::Method,
    route: &str,
) -> Result<serde_json::Value, Failure> {
    let token = secret(&hub.token_env)?;
    let url = format!("{}/{route}", hub.hub.trim_end_matches('/'));
    let sent = reqwest::Client::new()
        .request(method, &url)
        .bearer_auth(token)
        .send()
        .await;
    let answer = sent.map_err(|error| {
        Failure::failed(format!("the hub at {} did not answer: {error}", hub.hub))
    })?;
    let status = answer.status();
    let body: serde_json::Value = answer.json().await.unwrap_or_default();
    if !status.is_success() {
        let message = body["error"]["message"]
            .as_str()
            .unwrap_or("no reason given");
        return Err(Failure::failed(format!(
            "the hub answered {status}: {message}"
        )));
    }
    Ok(body)
}

fn rows(devices: &serde_json::Value) -> Vec<Vec<String>> {
    let devices = devices.as_array().cloned().unwrap_or_default();
    devices
        .iter()
        .map(|device| {
            let online = match (device["online"].as_bool(), device["revoked"].as_bool()) {
                (_, Some(true)) => "revoked",
                (Some(true), _) => "online",
                _ => "offline",
            };
            let seen = device["last_seen_ms"]
                .as_u64()
                .map_or("never".to_owned(), ago);
            let tools: Vec<&str> = device["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str())
                .collect();
            let text = |key: &str| device[key].as_str().unwrap_or_default().to_owned();
            vec![
                text("id"),
                online.to_owned(),
                seen,
                text("permission"),
                tools.join(", "),
            ]
        })
        .collect()
}

/// How long ago a time (ms since the epoch) was.
fn ago(ms: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |now| now.as_millis() as u64);
    let seconds = now.saturating_sub(ms) / 1000;
    humantime::format_duration(std::time::Duration::from_secs(seconds)).to_string() + " ago"
}

/// A secret from the environment, or a usage error naming the variable.
fn secret(variable: &str) -> Result<String, Failure> {
    std::env::var(variable)
        .ok()
        .filter(|value| !value.is_empty())
        .ok_or_else(|| {
            Failure::usage(format!(
                "the environment variable `{variable}` is not set (it holds the token)"
            ))
        })
}
