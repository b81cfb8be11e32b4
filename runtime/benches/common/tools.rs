//! The two tools every call bench measures, `add` and `search`: written for toolgate, as
//! plain functions (what rmcp's tools and the hand-written floor call), and their arguments.
//! The HTTP benches of the examples include this file too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What `add` gives.
#[derive(Serialize, JsonSchema)]
pub struct Sum {
    pub sum: i64,
}

/// What `search` gives.
#[derive(Serialize, JsonSchema)]
pub struct Found {
    query: String,
    hits: Vec<String>,
}

/// `add`'s work, as a plain function.
pub fn add_directly(a: i64, b: i64) -> Sum {
    Sum { sum: a + b }
}

/// `search`'s work, as a plain function.
pub fn search_directly(query: String, max: u32, tags: Vec<String>) -> Found {
    let hits = tags.into_iter().take(max as usize).collect();
    Found { query, hits }
}

/// Add two numbers.
#[toolgate::tool(permission = "public", read_only)]
pub async fn add(a: i64, b: i64) -> Sum {
    add_directly(a, b)
}

/// Search the catalogue.
#[toolgate::tool(permission = "public", read_only)]
pub async fn search(
    /// What to look for.
    query: String,
    /// Most hits.
    max: u32,
    /// Tags the hits must carry.
    tags: Vec<String>,
) -> Found {
    search_directly(query, max, tags)
}

/// `add`'s arguments, for the floor and rmcp.
#[derive(Deserialize, JsonSchema)]
pub struct AddArguments {
    pub a: i64,
    pub b: i64,
}

/// `search`'s arguments, for the floor and rmcp.
#[derive(Deserialize, JsonSchema)]
pub struct SearchArguments {
    /// What to look for.
    pub query: String,
    /// Most hits.
    pub max: u32,
    /// Tags the hits must carry.
    pub tags: Vec<String>,
}

/// The arguments every bench calls `add` with.
pub const ADD: &str = r#"{"a": 20, "b": 22}"#;
/// The arguments every bench calls `search` with.
pub const SEARCH: &str = r#"{"query": "vaccination schedule", "max": 5, "tags": ["dog", "puppy"]}"#;
