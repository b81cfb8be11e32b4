//! The registry's side of search: keeping the index in step with the tools, and searching
//! only among what a caller may see.

use std::sync::Arc;

use super::Registry;
use super::config::Config;
use super::snapshot::Snapshot;
use serde_json::Value;

use crate::caller::Caller;
use crate::formats::{Format, NoNativeToolSearch, deferred_tools};
use crate::search::{SearchHit, bounded, latest_requests};

/// Indexes every tool of a new registry.
pub(super) fn index_all(config: &Config, snapshot: &Snapshot) {
    let tools: Vec<_> = snapshot
        .entries()
        .iter()
        .map(|entry| (&*entry.definition, entry.rank))
        .collect();
    config.search.insert_many(&tools);
}

/// Tells the index what changed between two snapshots, one tool at a time.
pub(super) fn index_changes(config: &Config, before: &Snapshot, after: &Snapshot) {
    for entry in before.entries() {
        if after.any(&entry.definition.name).is_none() {
            config.search.remove(&entry.definition.name);
        }
    }
    let added: Vec<_> = after
        .entries()
        .iter()
        .filter(|entry| {
            let known = before.any(&entry.definition.name);
            !known.is_some_and(|known| Arc::ptr_eq(known, entry))
        })
        .map(|entry| (&*entry.definition, entry.rank))
        .collect();
    config.search.insert_many(&added);
}

/// The most tools one search returns.
pub(crate) const SEARCH_LIMIT: usize = 100;

impl Registry {
    /// The tools `caller` may see that best match `query`, best first, at most `limit` (and
    /// at most 100):
    /// deterministic (ties by name), with scores. A tool the caller may not see is never
    /// among them and changes no score. A query is read up to
    /// [`MAX_QUERY_BYTES`](crate::search::MAX_QUERY_BYTES); an empty one finds nothing.
    pub fn search(&self, caller: &Caller, query: &str, limit: usize) -> Vec<SearchHit> {
        self.search_text(caller, bounded(query, false), limit)
    }

    /// Tools worth offering for a conversation (e.g. its last messages): the tools that fit
    /// one of its latest requests (its last four sentences, each read alone, role labels
    /// such as `User:` left out, and the text as a whole), most relevant first, where the
    /// [relevance](crate::search::Scored::relevance) reaches the registry's
    /// [suggestion threshold](crate::RegistryBuilder::suggestion_threshold); a tool that
    /// does not rank (score 0) is never offered. A long text is read from its end.
    pub fn suggest(&self, caller: &Caller, conversation: &str, limit: usize) -> Vec<SearchHit> {
        let threshold = self.inner.config.suggestion_threshold;
        let mut offered: Vec<SearchHit> = Vec::new();
        for request in latest_requests(bounded(conversation, true)) {
            let hits = self.search_text(caller, request, limit);
            // A tool that ranks nowhere (score 0) is never offered, whatever it shares.
            let fitting = hits
                .into_iter()
                .filter(|hit| hit.score > 0.0 && hit.relevance >= threshold);
            for hit in fitting {
                let name = &hit.definition.name;
                match offered
                    .iter_mut()
                    .find(|known| known.definition.name == *name)
                {
                    Some(known) if known.relevance >= hit.relevance => {}
                    Some(known) => *known = hit,
                    None => offered.push(hit),
                }
            }
        }
        offered.sort_by(|a, b| {
            let order = b.relevance.total_cmp(&a.relevance);
            order.then_with(|| a.definition.name.cmp(&b.definition.name))
        });
        offered.truncate(limit);
        offered
    }

    /// The caller's tools for a provider's own tool search (see
    /// [`deferred_tools`](crate::formats::deferred_tools)): all but those named in `always`
    /// are sent with `defer_loading: true`, and the provider's search tool is added. Only
    /// Anthropic Messages and OpenAI Responses have one; for the others, offer
    /// [`SearchTools`](crate::tool_search::SearchTools).
    pub fn export_deferred(
        &self,
        caller: &Caller,
        format: Format,
        always: &[&str],
    ) -> Result<Value, NoNativeToolSearch> {
        deferred_tools(format, &self.visible_to(caller), always)
    }

    /// What a call of `name` is answered when `caller` may not see it: the `unknown_tool`
    /// error with its "did you mean" (for protocols that answer before calling).
    #[cfg(feature = "mcp")]
    pub(crate) fn unknown_tool(&self, caller: &Caller, name: &str) -> crate::error::ToolError {
        let snapshot = self.inner.snapshot.load();
        let seer = (self.rank(caller), caller);
        // Visible only if registered since the caller was looked up: still unknown to it.
        super::find::unseen(&self.inner.config, &snapshot, seer, name)
    }

    fn search_text(&self, caller: &Caller, query: &str, limit: usize) -> Vec<SearchHit> {
        let Some(rank) = self.rank(caller) else {
            return Vec::new();
        };
        let snapshot = self.inner.snapshot.load();
        let limit = limit.min(snapshot.entries().len()).min(SEARCH_LIMIT);
        let scored = self.inner.config.search.search(query, rank, limit);
        scored
            .into_iter()
            .filter_map(|scored| {
                // The scorer may be the application's: the registry has the last word.
                let seer = (Some(rank), caller);
                let entry = super::find::seen(&self.inner.config, &snapshot, seer, &scored.name)?;
                Some(SearchHit {
                    definition: Arc::clone(&entry.definition),
                    score: scored.score,
                    relevance: scored.relevance,
                })
            })
            .collect()
    }
}
