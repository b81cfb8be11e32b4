//! Letting a model find its tools: it is shown a few tools and `search_tools`, and what a
//! search finds it can call next.
//!
//! - [`SearchTools`] is the `search_tools` tool: register it, and a model (through the agent
//!   loop, HTTP or MCP) can search the tools its caller may see; results come back as tool
//!   definitions in the model's provider format.
//! - [`ToolSearch`] is the agent loop's side: a [`ToolSelector`] that shows the model the
//!   tools you always want shown, `search_tools`, and every tool its searches found in this
//!   run, so that the model can call them on the next turn.
//! - For the providers' own tool search (Anthropic, OpenAI Responses), see
//!   [`Registry::export_deferred`].
//!
//! ```
//! use toolgate::{Caller, FnTool, Registry, ToolCall, ToolDefinition, ToolError};
//! use toolgate::formats::Format;
//! use toolgate::tool_search::SearchTools;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let registry = Registry::builder().roles(["public"]).build().unwrap();
//! let weather = ToolDefinition::new("get_weather", "Current weather for a city.", "public", json!({"type": "object"}));
//! registry.register(FnTool::new(weather, |_, _| async { Ok::<_, ToolError>(json!("sunny")) })).unwrap();
//! registry.register(SearchTools::new(&registry, Format::OpenAiChat { strict: false })).unwrap();
//!
//! let caller = Caller::new("u", "public");
//! let call = ToolCall::new("1", "search_tools", r#"{"query": "weather forecast"}"#);
//! let found = registry.call(&caller, call).await.result.unwrap();
//! assert_eq!(found["found"], json!(["get_weather"]));
//! assert_eq!(found["tools"][0]["function"]["name"], "get_weather");
//! # }
//! ```

use std::collections::HashSet;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::{Message, ToolSelector};
use crate::caller::Caller;
use crate::context::ToolContext;
use crate::definition::{Hints, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::formats::Format;
use crate::registry::{Registry, ToolList, WeakRegistry};
use crate::tool::{Tool, ToolFuture};

/// The search tool's name.
pub const SEARCH_TOOLS: &str = "search_tools";
/// Tools a search returns when the model asks for no number.
const DEFAULT_LIMIT: usize = 5;
/// The most tools one search returns.
const MAX_LIMIT: usize = 20;
/// The most found tools [`ToolSearch`] keeps showing (the most recently found).
const MAX_FOUND_SHOWN: usize = 40;

/// The `search_tools` tool: `{"query": "...", "limit": 5}` → `{"found": [names],
/// "tools": [definitions in the configured format]}`, among the tools the calling caller
/// may see (never `search_tools` itself). Visible to every role.
pub struct SearchTools {
    registry: WeakRegistry,
    format: Format,
    permission: String,
}

impl SearchTools {
    /// The tool for `registry`, answering with definitions in `format` (the format of the
    /// model that will call it). Register it on the same registry.
    pub fn new(registry: &Registry, format: Format) -> Self {
        let lowest = registry.roles().names().first().cloned();
        SearchTools {
            registry: registry.downgrade(),
            format,
            permission: lowest.unwrap_or_default(),
        }
    }
}

#[derive(Deserialize)]
struct SearchArguments {
    query: String,
    limit: Option<usize>,
}

impl Tool for SearchTools {
    fn definition(&self) -> ToolDefinition {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": crate::search::MAX_QUERY_BYTES,
                    "description": "What you want to do, in a few words, e.g. \"book a table at a restaurant\"."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": format!("How many tools to return (default {DEFAULT_LIMIT}).")
                }
            },
            "required": ["query"],
            "additionalProperties": false
        });
        let mut definition = ToolDefinition::new(
            SEARCH_TOOLS,
            "Search the tools you may use for the ones that fit a task. Returns their names and \
             definitions; call a found tool directly by its name.",
            self.permission.clone(),
            schema,
        );
        definition.hints = Hints {
            read_only: true,
            idempotent: true,
            ..Hints::default()
        };
        definition
    }

    fn call(&self, context: ToolContext, arguments: Value) -> ToolFuture {
        let registry = self.registry.upgrade();
        let format = self.format;
        Box::pin(async move {
            let registry = registry.ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ExecutionFailed,
                    "the tool registry is shutting down",
                )
            })?;
            let arguments: SearchArguments = serde_json::from_value(arguments)
                .map_err(|error| ToolError::new(ErrorCode::InvalidArguments, error.to_string()))?;
            let found = found_tools(&registry, context.caller(), &arguments);
            let names: Vec<&str> = found.iter().map(|tool| tool.name.as_str()).collect();
            Ok(json!({"found": names, "tools": format.tools(&found)}))
        })
    }
}

/// What a `search_tools` call finds for `caller`.
fn found_tools(
    registry: &Registry,
    caller: &Caller,
    arguments: &SearchArguments,
) -> Vec<Arc<ToolDefinition>> {
    let limit = arguments.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    registry
        .search(caller, &arguments.query, limit + 1)
        .into_iter()
        .map(|hit| hit.definition)
        .filter(|tool| tool.name != SEARCH_TOOLS)
        .take(limit)
        .collect()
}

/// The agent loop's side of tool search: each turn the model is shown the tools named in
/// [`always`](Self::always), `search_tools` (when registered), and the tools its
/// `search_tools` calls found so far in the run (the 40 most recent), all among the tools
/// the caller may see. Optionally, the best matches of the latest user message are shown
/// too ([`preload`](Self::preload)).
///
/// ```
/// # use toolgate::Registry;
/// use toolgate::tool_search::ToolSearch;
/// # let registry = Registry::builder().roles(["public"]).build().unwrap();
/// let selector = ToolSearch::new(&registry).always(["get_time"]).preload(3);
/// // Agent::builder(registry, model).select_tools(selector)
/// # let _ = selector;
/// ```
pub struct ToolSearch {
    registry: Registry,
    always: Vec<String>,
    preload: usize,
}

impl ToolSearch {
    /// Shows `search_tools` and what it found.
    pub fn new(registry: &Registry) -> Self {
        ToolSearch {
            registry: registry.clone(),
            always: Vec::new(),
            preload: 0,
        }
    }

    /// Tools shown on every turn.
    pub fn always<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.always.extend(names.into_iter().map(Into::into));
        self
    }

    /// Also shows the `count` best matches of the latest user message (default 0).
    pub fn preload(mut self, count: usize) -> Self {
        self.preload = count.min(MAX_LIMIT);
        self
    }

    /// The names found by the run's `search_tools` calls, most recent last.
    fn found(&self, caller: &Caller, transcript: &[Message]) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let calls = transcript.iter().flat_map(|message| match message {
            Message::Assistant { calls, .. } => calls.as_slice(),
            _ => &[],
        });
        for call in calls.filter(|call| call.name == SEARCH_TOOLS) {
            // Searching again gives what the call found (search is deterministic).
            let Ok(arguments) = serde_json::from_str::<SearchArguments>(&call.arguments) else {
                continue;
            };
            for tool in found_tools(&self.registry, caller, &arguments) {
                found.retain(|name| *name != tool.name);
                found.push(tool.name.clone());
            }
        }
        let excess = found.len().saturating_sub(MAX_FOUND_SHOWN);
        found.drain(..excess);
        found
    }

    fn preloaded(&self, caller: &Caller, transcript: &[Message]) -> Vec<String> {
        let latest = transcript.iter().rev().find_map(|message| match message {
            Message::User { text } => Some(text.as_str()),
            _ => None,
        });
        match (self.preload, latest) {
            (0, _) | (_, None) => Vec::new(),
            (count, Some(text)) => self
                .registry
                .suggest(caller, text, count)
                .into_iter()
                .map(|hit| hit.definition.name.clone())
                .collect(),
        }
    }
}

impl ToolSelector for ToolSearch {
    fn select(
        &self,
        caller: &Caller,
        transcript: &[Message],
        visible: &ToolList,
    ) -> Vec<Arc<ToolDefinition>> {
        let mut shown: HashSet<String> = self.always.iter().cloned().collect();
        shown.insert(SEARCH_TOOLS.to_owned());
        shown.extend(self.preloaded(caller, transcript));
        shown.extend(self.found(caller, transcript));
        visible
            .iter()
            .filter(|tool| shown.contains(&tool.name))
            .cloned()
            .collect()
    }
}
