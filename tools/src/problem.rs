//! One problem with one file: where (file and line) and what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// A file that could not be used, and why; the other files still load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line the problem is on, when known.
    pub line: Option<usize>,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl Problem {
    /// A problem with `file`, at `line` when known.
    pub fn new(file: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        Problem {
            file: file.to_owned(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for Problem {}

/// The 1-based line where `key` is written as a key (`key:` in YAML, `key =` in TOML), at
/// any indentation; the first such line.
pub(crate) fn line_of_key(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            line.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with([':', '=']))
        })
        .map(|index| index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_in_yaml_and_toml() {
        let yaml = "---\nname: x\npermission: staff\n---\nbody permission: no";
        assert_eq!(line_of_key(yaml, "permission"), Some(3));
        let toml = "name = \"x\"\n\n[command]\nprogram = \"echo\"";
        assert_eq!(line_of_key(toml, "program"), Some(4));
        assert_eq!(line_of_key(toml, "nothing"), None);
        // A key that only begins like another is not it.
        assert_eq!(line_of_key("names: 1\nname: 2", "name"), Some(2));
    }
}
