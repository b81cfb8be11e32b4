//! Quoting what a model sent back in an error message: its beginning only, since it can be
//! of any size.

/// Longest piece of a model's text quoted in a message, in characters.
const MAX_QUOTED_CHARS: usize = 80;

/// The first 80 characters of `text`, with `…` where it was cut.
pub(crate) fn beginning(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The last `max_bytes` of `text` (trimmed), cut on a character: where a program's output
/// says what went wrong.
#[cfg(any(feature = "services", feature = "file-tools"))]
pub(crate) fn ending(text: &str, max_bytes: usize) -> &str {
    let text = text.trim();
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_on_a_character_and_marked() {
        assert_eq!(beginning("short"), "short");
        let long = "é".repeat(100);
        assert_eq!(beginning(&long), format!("{}…", "é".repeat(80)));
    }

    #[test]
    #[cfg(any(feature = "services", feature = "file-tools"))]
    fn the_ending_is_cut_on_a_character() {
        assert_eq!(ending("  abc\n", 10), "abc");
        assert_eq!(ending("aé", 1), "");
        assert_eq!(ending("aéb", 3), "éb");
    }
}
