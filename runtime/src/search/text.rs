//! Text to search terms: words split at punctuation, `_`, `.`, `-` and camelCase, lower-cased,
//! English stop words dropped, stemmed (Snowball English), and a few words that tool texts
//! use interchangeably made one ("fetch", "retrieve" → "get").

use std::collections::HashMap;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Words that say nothing about which tool is meant.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "by",
    "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "like", "me", "my", "no",
    "not", "of", "on", "or", "our", "please", "she", "should", "so", "some", "than", "that", "the",
    "their", "them", "then", "there", "they", "this", "to", "us", "want", "was", "we", "were",
    "what", "when", "where", "which", "who", "will", "with", "would", "you", "your",
];

/// Words (stemmed) that tool texts use for the same thing, each mapped to the first of its
/// line: mostly the actions every tool catalog names. Measured by `search_eval`.
const SAME_MEANING: &[&[&str]] = &[
    &["get", "fetch", "retriev", "obtain"],
    &[
        "find", "search", "lookup", "discov", "locat", "seek", "look",
    ],
    &["creat", "add", "insert"],
    &["delet", "remov", "eras"],
    &["updat", "modifi", "chang", "edit", "alter"],
    &["list", "enumer"],
    &["buy", "purchas"],
    &["reserv", "book"],
    &["movi", "film"],
    &["song", "track"],
];

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The search terms of `text`, in order.
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    for word in words(text) {
        match is_cjk_word(&word) {
            true => cjk_bigrams(&word, &mut terms),
            false => terms.extend(term(&word)),
        }
    }
    terms
}

/// Whether `word` (from [`words`]) is written in a script without spaces.
pub(crate) fn is_cjk_word(word: &str) -> bool {
    word.chars().next().is_some_and(is_cjk)
}

/// The term of one word that is not CJK, if it means anything.
pub(crate) fn term(word: &str) -> Option<String> {
    let word = word.to_lowercase();
    let meaningless = word.len() < 2 || word.chars().all(|c| c.is_ascii_digit());
    if meaningless || STOP_WORDS.binary_search(&word.as_str()).is_ok() {
        return None;
    }
    let stem = STEMMER.stem(&word);
    Some(same_meaning(&stem).unwrap_or(&stem).to_owned())
}

/// Each word of [`SAME_MEANING`] to the first of its line.
static SAME_MEANING_MAP: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    SAME_MEANING
        .iter()
        .flat_map(|line| line[1..].iter().map(|word| (*word, line[0])))
        .collect()
});

fn same_meaning(stem: &str) -> Option<&'static str> {
    SAME_MEANING_MAP.get(stem).copied()
}

/// Runs of letters and digits, split where camelCase changes case ("getHTTPServer" → "get",
/// "HTTP", "Server") and where a run of CJK characters starts or ends.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (index, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut words);
            continue;
        }
        if let Some(&previous) = current.chars().last().as_ref() {
            let next = chars.get(index + 1).copied();
            if starts_word(previous, c, next) {
                flush(&mut current, &mut words);
            }
        }
        current.push(c);
    }
    flush(&mut current, &mut words);
    words
}

fn starts_word(previous: char, c: char, next: Option<char>) -> bool {
    let lower_to_upper = (previous.is_lowercase() || previous.is_ascii_digit()) && c.is_uppercase();
    // The last capital of an acronym followed by a lowercase letter starts a new word.
    let acronym_end =
        previous.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase);
    lower_to_upper || acronym_end || is_cjk(previous) != is_cjk(c)
}

fn flush(current: &mut String, words: &mut Vec<String>) {
    if !current.is_empty() {
        words.push(std::mem::take(current));
    }
}

/// Scripts written without spaces between words: searched by pairs of characters.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

pub(crate) fn cjk_bigrams(word: &str, terms: &mut Vec<String>) {
    let chars: Vec<char> = word.chars().collect();
    if chars.len() == 1 {
        terms.push(word.to_owned());
    }
    terms.extend(chars.windows(2).map(|pair| pair.iter().collect()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn names_split_at_case_and_punctuation() {
        assert_eq!(terms("getHTTPServer"), ["get", "http", "server"]);
        assert_eq!(terms("Weather_1_GetWeather"), ["weather", "get", "weather"]);
        assert_eq!(terms("uber.ride-share"), ["uber", "ride", "share"]);
    }

    #[test]
    fn words_are_stemmed_and_actions_made_one() {
        assert_eq!(terms("Retrieves the films"), ["get", "movi"]);
        assert_eq!(terms("I'd like to book a table"), ["reserv", "tabl"]);
    }

    #[test]
    fn cjk_is_searched_by_pairs() {
        assert_eq!(terms("工单"), ["工单"]);
        assert_eq!(terms("获取工单"), ["获取", "取工", "工单"]);
        assert_eq!(terms("p4工单"), ["p4", "工单"]);
    }

    #[test]
    fn empty_and_symbol_only_text_has_no_terms() {
        assert!(terms("").is_empty());
        assert!(terms("?! — …").is_empty());
    }
}
