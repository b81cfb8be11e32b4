//! `toolgate call NAME --param value ...`: arguments typed from the tool's schema, approval
//! asked on the terminal (or read from stdin), the outcome printed.

use anstream::{eprintln, println};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::BuildOptions;
use clap::Args;
use serde_json::{Map, Value, json};
use toolgate::approval::Approver;
use toolgate::{CallOptions, Caller, ErrorCode, ToolCall, ToolDefinition};

use crate::approve::TerminalApprover;
use crate::failure::Failure;
use crate::output;
use crate::setup::{self, Acting};

/// The call's own options may also come after the tool's parameters (unless the tool has
/// a parameter of the same name).
#[derive(Args)]
#[command(
    after_help = "Parameters are typed from the tool's schema: --count 3 is a number, \
--verbose alone is true, a repeated --tag makes an array, objects are written as JSON. \
`--role`, `--as`, `--dry-run`, `--json` and `--output` may also follow the parameters."
)]
pub struct CallArgs {
    /// The tool.
    name: String,
    #[command(flatten)]
    acting: Acting,
    /// All arguments as one JSON object instead of --param value pairs.
    #[arg(long, value_name = "JSON")]
    json: Option<String>,
    /// Decide (validation, policy) but do not run.
    #[arg(long)]
    dry_run: bool,
    /// Print the whole outcome as JSON.
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "json"], default_value = "text")]
    output: String,
    /// The tool's parameters: --name value ...
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PARAMS"
    )]
    params: Vec<String>,
}

pub async fn run(config: &Path, mut args: CallArgs) -> Result<ExitCode, Failure> {
    let approver: Arc<dyn Approver> = Arc::new(TerminalApprover);
    let options = BuildOptions {
        approver: Some(approver),
        ..BuildOptions::default()
    };
    let (_, built) = setup::load(config, options).await?;
    let top = Caller::new("cli", setup::top_role(&built).as_str());
    let definition = built.registry.definition(&top, &args.name);
    let parameters = definition
        .as_deref()
        .map(parameter_names)
        .unwrap_or_default();
    take_own_options(&mut args, &parameters)?;
    let caller = args.acting.caller(&built, &setup::top_role(&built))?;
    let Some(definition) =
        definition.filter(|_| built.registry.definition(&caller, &args.name).is_some())
    else {
        return Err(Failure::not_found(format!(
            "no tool `{}` for the role \"{}\"; see `toolgate tools list --role {}`",
            args.name,
            caller.role(),
            caller.role()
        )));
    };
    let arguments = match &args.json {
        Some(text) => serde_json::from_str::<Value>(text)
            .map_err(|error| Failure::usage(format!("--json is not JSON: {error}")))?,
        None => typed_arguments(&definition, &args.params)?,
    };
    let call = ToolCall::new("cli-1", &args.name, arguments);
    let options = CallOptions {
        dry_run: args.dry_run,
        front: toolgate::FrontEnd::Cli,
        ..CallOptions::default()
    };
    let outcome = built.registry.call_with(&caller, call, options).await;
    setup::send_telemetry(&built).await;
    if args.output == "json" {
        let body = toolgate::http::OutcomeBody::from(outcome.clone());
        output::json(&serde_json::to_value(&body).unwrap_or(Value::Null));
    }
    match &outcome.result {
        Ok(value) => {
            if args.output != "json" {
                print_value(&outcome, value);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            if args.output != "json" {
                eprintln!(
                    "{}",
                    output::error_line(&format!("{}: {}", error.code.as_str(), error.message))
                );
            }
            Ok(ExitCode::from(match error.code {
                ErrorCode::ApprovalRequired | ErrorCode::ApprovalDenied => 3,
                ErrorCode::UnknownTool => 4,
                _ => 1,
            }))
        }
    }
}

pub(crate) fn print_value(outcome: &toolgate::ToolOutcome, value: &Value) {
    // Content (images, resources) as a reader of text gets it: the text, the rest described.
    if outcome.is_content {
        println!("{}", toolgate::formats::outcome_text(outcome));
        return;
    }
    match value {
        Value::String(text) => println!("{text}"),
        other => output::json(other),
    }
}

fn parameter_names(definition: &ToolDefinition) -> Vec<String> {
    definition.input_schema["properties"]
        .as_object()
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// Moves `--role`, `--as`, `--dry-run`, `--json` and `--output` written after the tool's
/// name out of its parameters, unless the tool has a parameter of that name.
fn take_own_options(args: &mut CallArgs, parameters: &[String]) -> Result<(), Failure> {
    let mut kept = Vec::new();
    let mut words = std::mem::take(&mut args.params).into_iter();
    while let Some(word) = words.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (word.clone(), None),
        };
        let own = ["--role", "--as", "--dry-run", "--json", "--output"].contains(&flag.as_str())
            && !parameters.iter().any(|name| flag == format!("--{name}"));
        if !own {
            kept.push(word);
            continue;
        }
        if flag == "--dry-run" {
            args.dry_run = true;
            continue;
        }
        let value = inline
            .or_else(|| words.next())
            .ok_or_else(|| Failure::usage(format!("{flag} needs a value")))?;
        match flag.as_str() {
            "--role" => args.acting.role = Some(value),
            "--as" => args.acting.caller = Some(value),
            "--json" => args.json = Some(value),
            _ if value == "json" || value == "text" => args.output = value,
            _ => return Err(Failure::usage("--output is `text` or `json`")),
        }
    }
    args.params = kept;
    if args.acting.role.is_some() && args.acting.caller.is_some() {
        return Err(Failure::usage("give --role or --as, not both"));
    }
    if args.json.is_some() && !args.params.is_empty() {
        return Err(Failure::usage(
            "give the arguments as --json or as --param value pairs, not both",
        ));
    }
    Ok(())
}

/// `--name value` pairs typed from the tool's input schema.
pub(crate) fn typed_arguments(
    definition: &ToolDefinition,
    words: &[String],
) -> Result<Value, Failure> {
    let properties = definition.input_schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let known = || {
        properties
            .keys()
            .map(|name| format!("--{name}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut arguments = Map::new();
    let mut index = 0;
    while index < words.len() {
        let word = &words[index];
        let Some(flag) = word.strip_prefix("--") else {
            return Err(Failure::usage(format!(
                "`{word}` is not a --parameter; `{}` takes {}",
                definition.name,
                known()
            )));
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (flag, None),
        };
        let Some(schema) = properties.get(name) else {
            return Err(Failure::usage(format!(
                "`{}` has no parameter `{name}`; it takes {}",
                definition.name,
                known()
            )));
        };
        let kind = schema["type"].as_str().unwrap_or("string");
        let next_is_value = words
            .get(index + 1)
            .is_some_and(|next| !next.starts_with("--"));
        let text = match inline {
            Some(text) => text,
            None if kind == "boolean" && !next_is_value => "true".to_owned(),
            None if next_is_value => {
                index += 1;
                words[index].clone()
            }
            None => return Err(Failure::usage(format!("--{name} needs a value"))),
        };
        index += 1;
        let value = typed(name, kind, schema, &text)?;
        match (kind, arguments.get_mut(name)) {
            ("array", Some(Value::Array(items))) => {
                items.extend(value.as_array().cloned().unwrap_or_default())
            }
            _ => {
                arguments.insert(name.to_owned(), value);
            }
        }
    }
    Ok(Value::Object(arguments))
}

fn typed(name: &str, kind: &str, schema: &Value, text: &str) -> Result<Value, Failure> {
    let wrong = |what: &str| Failure::usage(format!("--{name} takes {what}, not `{text}`"));
    Ok(match kind {
        "integer" => json!(text.parse::<i64>().map_err(|_| wrong("a whole number"))?),
        "number" => json!(text.parse::<f64>().map_err(|_| wrong("a number"))?),
        "boolean" => json!(text.parse::<bool>().map_err(|_| wrong("true or false"))?),
        "array" => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => Value::Array(items),
            _ => Value::Array(vec![typed(
                name,
                schema["items"]["type"].as_str().unwrap_or("string"),
                &schema["items"],
                text,
            )?]),
        },
        "object" => serde_json::from_str::<Value>(text).map_err(|_| wrong("a JSON object"))?,
        _ => Value::String(text.to_owned()),
    })
}
