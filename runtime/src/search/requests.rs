//! A conversation read for suggestions: its latest requests, each on its own. A tool is
//! worth offering when it fits one of them; greetings and earlier turns around the request
//! would only dilute it.

/// The most requests (sentences or lines, from the end) read of a conversation.
const LATEST: usize = 4;

/// The conversation's last few sentences, latest first, each without a role label
/// ("User:"), then the whole text.
pub(crate) fn latest_requests(conversation: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = Vec::new();
    for line in conversation.lines().rev() {
        for sentence in sentences(unlabeled(line)).into_iter().rev() {
            if parts.len() == LATEST {
                break;
            }
            parts.push(sentence);
        }
    }
    let whole = conversation.trim();
    if !whole.is_empty() && !parts.contains(&whole) {
        parts.push(whole);
    }
    parts
}

/// A line without a leading one-word role label and its colon.
fn unlabeled(line: &str) -> &str {
    let line = line.trim();
    match line.split_once(':') {
        Some((label, rest))
            if !label.is_empty() && label.chars().all(|c| c.is_alphabetic() || c == '_') =>
        {
            rest.trim()
        }
        _ => line,
    }
}

/// The sentences of a line: split after `.`, `?` and `!` followed by a space.
fn sentences(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for (index, byte) in bytes.iter().enumerate() {
        let ends = matches!(byte, b'.' | b'?' | b'!');
        if ends && bytes.get(index + 1).is_some_and(|next| *next == b' ') {
            parts.push(line[start..=index].trim());
            start = index + 1;
        }
    }
    parts.push(line[start..].trim());
    parts.retain(|part| !part.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::latest_requests;

    #[test]
    fn the_latest_sentences_come_first_without_role_labels() {
        let conversation = "User: hi!\nAssistant: hello, how can I help?\nUser: Thanks. What's the forecast in Oslo?";
        assert_eq!(
            latest_requests(conversation),
            [
                "What's the forecast in Oslo?",
                "Thanks.",
                "hello, how can I help?",
                "hi!",
                conversation
            ]
        );
        assert_eq!(latest_requests("book a table"), ["book a table"]);
        assert!(latest_requests("  \n ").is_empty());
    }
}
