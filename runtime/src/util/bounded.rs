//! Bounds on text the library quotes back: a caller's oversized name or key must not come
//! back whole in an error message.

use std::borrow::Cow;

/// Longest piece of caller-given text (a tool name, a key, a value) quoted in a message.
pub(crate) const MAX_QUOTED: usize = 80;
/// Longest single line of an error message (one schema violation, one unknown name).
pub(crate) const MAX_LINE: usize = 300;

/// `text`, cut at `max` bytes (on a character boundary) with a note of how much was left out.
pub(crate) fn clip(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}… ({} more bytes left out)",
        &text[..end],
        text.len() - end
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_on_a_character_boundary_and_says_so() {
        assert_eq!(clip("short", 10), "short");
        let clipped = clip("ééééé", 3);
        assert_eq!(clipped, "é… (8 more bytes left out)");
    }
}
