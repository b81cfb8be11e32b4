//! Values a query mentions, by their shape: a user who gives a date wants a tool that takes
//! one. Each shape found adds the word a tool's parameters use for it to the query.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

const MONTH: &str = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
const DAY: &str = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|yesterday|tonight|weekend)";

/// (word added, pattern).
static SHAPES: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    let date = format!(
        r"\b\d{{4}}[-./]\d{{1,2}}[-./]\d{{1,2}}\b|\b\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}\b|\b{MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}\b|\b{DAY}\b"
    );
    let shapes = [
        ("date", date.as_str()),
        (
            "time",
            r"\b\d{1,2}:\d{2}\b|\b\d{1,2}(?:[.:]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|o'clock)|\b(?:in the (?:morning|afternoon|evening)|noon|midnight)\b",
        ),
        ("email", r"\b[\w.+-]+@[\w-]+\.[\w.]+\b"),
        ("url", r"\bhttps?://\S+|\bwww\.\S+"),
        (
            "amount",
            r"[$€£¥]\s?\d|\b\d+(?:\.\d+)?\s*(?:dollars?|usd|eur|euros?|gbp|pounds?|rupees?|inr|yen)\b",
        ),
    ];
    shapes
        .into_iter()
        .map(|(word, pattern)| {
            let regex = RegexBuilder::new(pattern)
                .case_insensitive(true)
                .size_limit(1 << 22)
                .build()
                .expect("the shape patterns are valid");
            (word, regex)
        })
        .collect()
});

/// The words for the shapes of values found in `query`, e.g. `["date", "time"]`.
pub(crate) fn shape_words(query: &str) -> Vec<&'static str> {
    SHAPES
        .iter()
        .filter(|(_, regex)| regex.is_match(query))
        .map(|(word, _)| *word)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::shape_words;

    #[test]
    fn finds_dates_times_and_contacts() {
        assert_eq!(shape_words("weather in Paris on March 3rd"), ["date"]);
        assert_eq!(shape_words("on 2023-10-01 at 8:30"), ["date", "time"]);
        assert_eq!(shape_words("mail bob@example.com $20"), ["email", "amount"]);
        assert_eq!(shape_words("open https://example.com"), ["url"]);
        assert!(shape_words("hello there").is_empty());
    }
}
