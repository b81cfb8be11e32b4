//! "Did you mean": the visible tool names closest to a name that matched none.

use std::sync::Arc;

use crate::definition::ToolDefinition;

/// The most names suggested.
const MAX_SUGGESTED: usize = 3;
/// How alike (0 to 1, normalized Damerau–Levenshtein) a name must be to be suggested.
const MIN_SIMILARITY: f64 = 0.6;

/// Up to three names for `wanted`: the visible names most alike in spelling, then the best
/// of `searched` (names a search for `wanted`'s words found among the same visible tools).
pub(crate) fn did_you_mean(
    wanted: &str,
    visible: &[Arc<ToolDefinition>],
    searched: Vec<String>,
) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let mut alike: Vec<(f64, &str)> = visible
        .iter()
        .map(|tool| tool.name.as_str())
        .filter(|name| name.len().abs_diff(wanted.len()) <= wanted.len() / 2 + 2)
        .map(|name| {
            let similarity =
                strsim::normalized_damerau_levenshtein(&wanted_lower, &name.to_lowercase());
            (similarity, name)
        })
        .filter(|(similarity, _)| *similarity >= MIN_SIMILARITY)
        .collect();
    alike.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut names: Vec<String> = alike.into_iter().map(|(_, name)| name.to_owned()).collect();
    for name in searched {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.truncate(MAX_SUGGESTED);
    names
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools(names: &[&str]) -> Vec<Arc<ToolDefinition>> {
        names
            .iter()
            .map(|name| Arc::new(ToolDefinition::new(*name, "", "public", json!({}))))
            .collect()
    }

    #[test]
    fn misspellings_find_the_closest_names_first() {
        let visible = tools(&["get_weather", "get_whether", "send_email"]);
        let names = did_you_mean("get_wether", &visible, vec!["send_email".into()]);
        assert_eq!(names, ["get_weather", "get_whether", "send_email"]);
    }

    #[test]
    fn nothing_alike_gives_only_search_results() {
        let visible = tools(&["get_weather"]);
        assert!(did_you_mean("zzzzzz", &visible, Vec::new()).is_empty());
    }
}
