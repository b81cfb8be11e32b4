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
    /// Terms of words that look like values the user gives (names, codes, quoted text),
    /// not what they want done.
    values: Vec<String>,
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
        Query {
            terms,
            sequence,
            values: value_terms(text),
        }
    }

    /// Whether `term` came from a word that looks like a value (see [`value_terms`]).
    pub(crate) fn is_value(&self, term: &str) -> bool {
        self.values.iter().any(|value| value == term)
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

/// The terms of the words of `text` that look like values rather than requests: a word with
/// a digit, `@` or `/` in it, a capitalized word that does not begin a sentence (a name: "in
/// Boston"), and words in quotes. A word no tool has says the request is about something
/// else, unless it is such a value.
fn value_terms(text: &str) -> Vec<String> {
    const OPENING: [char; 4] = ['"', '\'', '\u{201c}', '\u{2018}'];
    const CLOSING: [char; 4] = ['"', '\'', '\u{201d}', '\u{2019}'];
    let mut values = Vec::new();
    let (mut sentence_start, mut quoted) = (true, false);
    for token in text.split_whitespace() {
        let opens = token.starts_with(OPENING);
        let bare = token.trim_end_matches(['.', ',', '?', '!', ':', ';']);
        let closes = bare.len() > 1 && bare.ends_with(CLOSING);
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let capitalized = word.chars().next().is_some_and(char::is_uppercase);
        let marked = word.contains(|c: char| c.is_ascii_digit()) || token.contains(['@', '/']);
        if quoted || opens || marked || (capitalized && !sentence_start) {
            values.extend(text::terms(word));
        }
        quoted = (quoted || opens) && !closes;
        sentence_start = bare.len() < token.len() && token.ends_with(['.', '?', '!', ':']);
    }
    values
}
