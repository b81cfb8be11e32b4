//! How a command fails: one line on stderr and an exit code.

use anstream::eprintln;
use std::process::ExitCode;

/// A failure with its exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// The tool, or a check, failed (1).
    pub fn failed(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// Bad usage or config (2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }

    /// No such tool for this role (4).
    pub fn not_found(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 4,
        }
    }
}

impl From<toolgate_tools::Problem> for Failure {
    fn from(problem: toolgate_tools::Problem) -> Self {
        Failure::usage(problem.to_string())
    }
}

/// Prints the failure as one line and gives its exit code.
pub fn report(failure: &Failure) -> ExitCode {
    let line = failure.message.replace('\n', " ");
    eprintln!("{}", crate::output::error_line(&line));
    ExitCode::from(failure.code)
}
