//! What is wrong with a set of rules: each problem names the file (or the rules' name in
//! code), the line, and what to do.

use miette::Diagnostic;

/// One problem with the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CedarProblem {
    /// The file, or the name the rules were given in code.
    pub file: String,
    /// The 1-based line, where one is known.
    pub line: Option<usize>,
    /// What is wrong, and the fix where Cedar or toolgate knows it.
    pub message: String,
}

impl std::fmt::Display for CedarProblem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(formatter, "{}:{line}: {}", self.file, self.message),
            None => write!(formatter, "{}: {}", self.file, self.message),
        }
    }
}

impl CedarProblem {
    /// A problem of `file` as a whole.
    pub(crate) fn of(file: &str, message: impl Into<String>) -> Self {
        CedarProblem {
            file: file.to_owned(),
            line: None,
            message: message.into(),
        }
    }

    /// A problem Cedar reported in `text` (the file `file`): its line from the first label,
    /// its message with Cedar's help.
    pub(crate) fn reported(
        file: &str,
        text: &str,
        diagnostic: &dyn Diagnostic,
        message: String,
    ) -> Self {
        let offset = diagnostic
            .labels()
            .and_then(|mut labels| labels.next())
            .map(|label| label.offset());
        let help = diagnostic.help().map(|help| help.to_string());
        CedarProblem {
            file: file.to_owned(),
            line: offset.map(|offset| line_at(text, offset)),
            message: match help {
                Some(help) if !message.contains(&help) => format!("{message} ({help})"),
                _ => message,
            },
        }
    }
}

/// The 1-based line of a byte offset.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|byte| **byte == b'\n')
        .count()
        + 1
}
