//! `${NAME}` in a tool file's headers and environment: a variable of toolgate's own
//! environment, read when the call runs, so secrets live in the environment and never in
//! the file (and never in logs, audit records or messages: only the variable's name is).

use toolgate::ToolError;

/// `text` with every `${NAME}` replaced by the variable's value.
pub fn interpolate(text: &str) -> Result<String, ToolError> {
    interpolate_with(text, |name| std::env::var(name).ok())
}

/// The variables `text` names, to check them when the file loads.
pub fn names(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        found.push(&rest[start + 2..start + end]);
        rest = &rest[start + end + 1..];
    }
    found
}

fn interpolate_with(
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, ToolError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| ToolError::execution("a `${` in the tool file is not closed by `}`"))?;
        let name = &rest[start + 2..start + end];
        let value = lookup(name).ok_or_else(|| {
            ToolError::execution(format!(
                "the environment variable `{name}` this tool needs is not set"
            ))
        })?;
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_replaced_and_a_missing_one_is_named_without_values() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(
            interpolate_with("Bearer ${TOKEN}!", lookup).unwrap(),
            "Bearer s3cret!"
        );
        let missing = interpolate_with("${TOKEN} ${OTHER}", lookup).unwrap_err();
        assert!(missing.message.contains("`OTHER`"), "{}", missing.message);
        assert!(!missing.message.contains("s3cret"));
        assert_eq!(names("a ${ONE} b ${TWO}"), ["ONE", "TWO"]);
    }
}
