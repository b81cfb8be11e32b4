//! What a span may show of a call's arguments and result: only when the application opted
//! in, secrets taken out, and bounded.

use serde_json::Value;

use crate::audit::REDACTED;
use crate::util::bounded::clip;

/// Whether arguments and results go on spans, and how much of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Capture {
    pub(crate) content: bool,
    pub(crate) max_bytes: usize,
}

impl Default for Capture {
    fn default() -> Self {
        Capture {
            content: false,
            max_bytes: 4096,
        }
    }
}

/// Secret values shorter than this are not searched for in results: every `"a"` of a result
/// would be taken for one.
const SHORTEST_SEARCHED_SECRET: usize = 4;

impl Capture {
    /// `value` as JSON text, cut at the bound, with every secret value in `secrets`
    /// replaced (a tool may echo its secret argument into its result or error).
    pub(crate) fn shown(&self, value: &Value, secrets: &[String]) -> String {
        let text = value.to_string();
        clip(&scrubbed(&text, secrets), self.max_bytes).into_owned()
    }
}

/// `text` with each of `secrets` replaced by the redaction mark.
pub(crate) fn scrubbed(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        if secret.len() >= SHORTEST_SEARCHED_SECRET && text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
        // As JSON text writes it, escapes and all.
        let quoted = Value::String(secret.clone()).to_string();
        let escaped = &quoted[1..quoted.len() - 1];
        if escaped != secret && escaped.len() >= SHORTEST_SEARCHED_SECRET {
            text = text.replace(escaped, REDACTED);
        }
    }
    text
}

/// The text values inside `value` (its strings, numbers as written), to scrub from results.
pub(crate) fn secret_values(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(text) => into.push(text.clone()),
        Value::Number(number) => into.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| secret_values(item, into)),
        Value::Object(fields) => fields.values().for_each(|item| secret_values(item, into)),
        Value::Bool(_) | Value::Null => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_secret_echoed_into_a_result_is_replaced_and_the_text_is_bounded() {
        let capture = Capture {
            content: true,
            max_bytes: 40,
        };
        let secrets = vec!["hunter2-\"quoted\"".to_owned()];
        let shown = capture.shown(&json!({"echo": "key=hunter2-\"quoted\""}), &secrets);
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains(REDACTED), "{shown}");
        let long = capture.shown(&json!("x".repeat(100)), &[]);
        assert!(long.starts_with("\"xxxx") && long.contains("more bytes left out"));
    }
}
