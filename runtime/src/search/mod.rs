//! Finding the right tool among many, for one caller.
//!
//! [`Registry::search`](crate::Registry::search) ranks the tools a caller may see for a
//! query; [`Registry::suggest`](crate::Registry::suggest) keeps only those relevant enough to
//! offer for a conversation; an `unknown_tool` error names the closest visible names; and
//! [`SearchTools`](crate::tool_search::SearchTools) lets a model search the catalog itself,
//! so it is shown a few tools and finds the rest.
//!
//! The default scorer, [`Bm25Index`], is BM25F over a tool's name, title, description,
//! parameters, group and tags, with stemming, a coverage factor, a phrase bonus and words
//! for the values a query mentions; [`Hybrid`] blends it with an [`Embedder`] (such as
//! `MiniLm`, feature `embeddings`) to also find tools by meaning. Both are measured on the
//! Berkeley Function Calling Leaderboard beside plain BM25 by `cargo run --release -p
//! toolgate-examples --features embeddings --bin search_eval` (see the README). An
//! application can bring its own [`Scorer`] with
//! [`RegistryBuilder::search_scorer`](crate::RegistryBuilder::search_scorer).
//!
//! ```
//! use toolgate::{Caller, Registry, ToolDefinition, FnTool, ToolError};
//! use serde_json::json;
//!
//! let registry = Registry::builder().roles(["public", "staff"]).build().unwrap();
//! for (name, description, role) in [
//!     ("get_weather", "Current weather for a city.", "public"),
//!     ("book_table", "Reserve a table at a restaurant.", "public"),
//!     ("refund_order", "Refund a customer's order.", "staff"),
//! ] {
//!     let definition = ToolDefinition::new(name, description, role, json!({"type": "object"}));
//!     registry
//!         .register(FnTool::new(definition, |_, _| async { Ok::<_, ToolError>(json!("ok")) }))
//!         .unwrap();
//! }
//! let public = Caller::new("u", "public");
//! let hits = registry.search(&public, "will it rain in Paris? what's the weather", 2);
//! assert_eq!(hits[0].definition.name, "get_weather");
//! // A tool above the caller's role is never found, not even with its own name.
//! assert!(registry.search(&public, "refund order", 5).is_empty());
//! ```

mod bm25f;
mod fields;
mod hybrid;
#[cfg(feature = "embeddings")]
mod minilm;
mod names;
mod query;
mod requests;
mod shapes;
mod text;
mod vector_cache;

use std::sync::{Arc, RwLock};

pub use bm25f::{Bm25Index, Bm25Settings};
pub use fields::Field;
pub use hybrid::{EmbedError, Embedder, Hybrid};
#[cfg(feature = "embeddings")]
#[cfg_attr(docsrs, doc(cfg(feature = "embeddings")))]
pub use minilm::MiniLm;
pub(crate) use names::did_you_mean;
pub(crate) use requests::latest_requests;

use crate::definition::ToolDefinition;
use crate::util::sync::{read, write};

/// The longest query read, in bytes: a longer one is cut (a conversation keeps its end).
pub const MAX_QUERY_BYTES: usize = 4096;

/// Ranks tools for a query. The registry tells it of every tool as it is added or removed,
/// with the tool's permission level (0 for the lowest role), and asks it for the best tools
/// at or below a caller's level.
///
/// A scorer must let only tools at or below `level` count toward a search (their existence
/// included: a hidden tool may not change a visible tool's score); the registry also drops
/// any name the caller may not see from what a scorer returns.
pub trait Scorer: Send + Sync + 'static {
    /// A tool was added (or replaced: same name).
    fn insert(&mut self, tool: &ToolDefinition, level: usize);
    /// Many tools were added at once (a registry being built): a scorer that works in
    /// batches (embeddings) overrides this.
    fn insert_many(&mut self, tools: &[(&ToolDefinition, usize)]) {
        for (tool, level) in tools {
            self.insert(tool, *level);
        }
    }
    /// A tool was removed.
    fn remove(&mut self, name: &str);
    /// The best `limit` tools at or below `level` for `query`, best first; ties broken by
    /// name so that results are deterministic. Tools that match nothing are left out.
    fn search(&self, query: &str, level: usize, limit: usize) -> Vec<Scored>;
}

impl Scorer for Box<dyn Scorer> {
    fn insert(&mut self, tool: &ToolDefinition, level: usize) {
        (**self).insert(tool, level);
    }

    fn insert_many(&mut self, tools: &[(&ToolDefinition, usize)]) {
        (**self).insert_many(tools);
    }

    fn remove(&mut self, name: &str) {
        (**self).remove(name);
    }

    fn search(&self, query: &str, level: usize, limit: usize) -> Vec<Scored> {
        (**self).search(query, level, limit)
    }
}

/// A scorer's answer for one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The tool.
    pub name: String,
    /// The ranking score: higher is better; comparable only within one search.
    pub score: f64,
    /// How much of the query the tool matches, from 0 to 1: comparable across searches,
    /// which is what [`Registry::suggest`](crate::Registry::suggest) thresholds.
    pub relevance: f64,
}

/// Puts `scored` in the order [`Scorer::search`] promises (best first, ties by name) and
/// keeps the first `limit`: for scorers that score every candidate.
pub fn best_first(scored: &mut Vec<Scored>, limit: usize) {
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.name.cmp(&b.name))
    });
    scored.truncate(limit);
}

/// One tool found for a caller.
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// The tool's definition, as the caller is shown it.
    pub definition: Arc<ToolDefinition>,
    /// See [`Scored::score`].
    pub score: f64,
    /// See [`Scored::relevance`].
    pub relevance: f64,
}

/// The registry's scorer, shared by searches and changed one tool at a time.
pub(crate) struct SearchIndex {
    scorer: RwLock<Box<dyn Scorer>>,
}

impl SearchIndex {
    pub(crate) fn new(scorer: Box<dyn Scorer>) -> Self {
        SearchIndex {
            scorer: RwLock::new(scorer),
        }
    }

    pub(crate) fn insert_many(&self, tools: &[(&ToolDefinition, usize)]) {
        contained("insert", || write(&self.scorer).insert_many(tools));
    }

    pub(crate) fn remove(&self, name: &str) {
        contained("remove", || write(&self.scorer).remove(name));
    }

    /// What the scorer finds; nothing if it panics (an application's scorer may).
    pub(crate) fn search(&self, query: &str, level: usize, limit: usize) -> Vec<Scored> {
        contained("search", || read(&self.scorer).search(query, level, limit)).unwrap_or_default()
    }
}

/// Runs `work`, turning a panic into `None` and a logged error.
fn contained<T>(what: &str, work: impl FnOnce() -> T) -> Option<T> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    if outcome.is_err() {
        tracing::error!(
            step = what,
            "the search scorer panicked; the search finds nothing"
        );
    }
    outcome.ok()
}

/// `text` cut to [`MAX_QUERY_BYTES`] at a character boundary, from the start or (for a
/// conversation, whose latest words matter most) from the end.
pub(crate) fn bounded(text: &str, keep_end: bool) -> &str {
    if text.len() <= MAX_QUERY_BYTES {
        return text;
    }
    if keep_end {
        let mut start = text.len() - MAX_QUERY_BYTES;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        &text[start..]
    } else {
        let mut end = MAX_QUERY_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        &text[..end]
    }
}
