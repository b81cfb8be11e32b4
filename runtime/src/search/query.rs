//! A query made ready for scoring: its terms with weights, and the pairs of adjacent terms.

use super::bm25f::pair_key;
use super::{shapes, text};

/// The most distinct terms a query is scored by; the rest are left out (bounded work for any
/// input).
const MAX_TERMS: usize = 256;

/// An analyzed query.
pub(crate) struct Query {
    /// Distinct terms in first-seen order: (term, weight, whether it is the user's own word).
    terms: Vec<(String, f32, bool)>,
    /// The user's terms in order, stop words left out.
    sequence: Vec<String>,
}

impl Query {
    pub(crate) fn parse(text: &str, shape_weight: f32) -> Query {
        let sequence = text::terms(text);
        let mut terms: Vec<(String, f32, bool)> = Vec::new();
        for term in &sequence {
            if terms.len() >= MAX_TERMS {
                break;
            }
            if !terms.iter().any(|(known, _, _)| known == term) {
                terms.push((term.clone(), 1.0, true));
            }
        }
        if shape_weight > 0.0 {
            // Analyzed like any word, so they meet the index's stemmed terms.
            for word in shapes::shape_words(text).into_iter().flat_map(text::terms) {
                match terms.iter_mut().find(|(known, _, _)| *known == word) {
                    Some(found) => found.1 += shape_weight,
                    None => terms.push((word, shape_weight, false)),
                }
            }
        }
        Query { terms, sequence }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// (term, weight, whether it counts toward coverage).
    pub(crate) fn weighted_terms(&self) -> impl Iterator<Item = (&str, f32, bool)> {
        self.terms
            .iter()
            .map(|(term, weight, own)| (term.as_str(), *weight, *own))
    }

    /// How many distinct terms the user wrote.
    pub(crate) fn distinct_terms(&self) -> usize {
        self.terms.iter().filter(|(_, _, own)| *own).count()
    }

    /// Adjacent pairs of known terms, as keys of the index.
    pub(crate) fn pairs(&self, id: impl Fn(&str) -> Option<u32>) -> Vec<u64> {
        self.sequence
            .windows(2)
            .take(MAX_TERMS)
            .filter_map(|pair| Some(pair_key(id(&pair[0])?, id(&pair[1])?)))
            .collect()
    }
}
