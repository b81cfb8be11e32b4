//! The file tools' error codes: `path_not_allowed`, `not_found`, `already_exists`,
//! `not_a_directory`, `is_a_directory`, `not_empty`, `too_large`.

use std::io;

use toolgate::ToolError;

/// A file error with its code.
pub(crate) struct FileError {
    code: &'static str,
    message: String,
}

impl FileError {
    pub(crate) fn from_io(path: &str, error: &io::Error) -> Self {
        let (code, message) = match error.kind() {
            io::ErrorKind::NotFound => ("not_found", format!("`{path}` does not exist")),
            io::ErrorKind::AlreadyExists => ("already_exists", format!("`{path}` already exists")),
            io::ErrorKind::NotADirectory => (
                "not_a_directory",
                format!("a part of `{path}` is not a directory"),
            ),
            io::ErrorKind::IsADirectory => ("is_a_directory", format!("`{path}` is a directory")),
            io::ErrorKind::DirectoryNotEmpty => (
                "not_empty",
                format!("`{path}` is not empty; delete it with `recursive: true`"),
            ),
            // cap-std answers an escape (e.g. through a symlink) with PermissionDenied.
            io::ErrorKind::PermissionDenied => (
                "path_not_allowed",
                format!("`{path}` leads outside the sandbox or may not be touched"),
            ),
            _ => ("execution_failed", format!("`{path}`: {error}")),
        };
        FileError { code, message }
    }
}

impl From<FileError> for ToolError {
    fn from(error: FileError) -> Self {
        ToolError::new(error.code, error.message)
    }
}

pub(crate) fn path_not_allowed(path: &str, why: &str) -> ToolError {
    ToolError::new(
        "path_not_allowed",
        // Debug form: invisible and direction characters show as escapes.
        format!(
            "the path {:?} is not allowed: {why}",
            crate::quote::beginning(path)
        ),
    )
}

pub(crate) fn coded(code: &'static str, message: String) -> ToolError {
    ToolError::new(code, message)
}
