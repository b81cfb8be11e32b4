//! The folders file tools may touch, and the path checks no call gets past.
//!
//! Paths are checked as text first (for clear errors: `..`, absolute and Windows-style
//! paths, NUL and control characters, Unicode look-alikes of dots and slashes), then every
//! operation goes through `cap-std`, which resolves the path *inside* the root's directory
//! handle at the moment of use: a symlink pointing out, even one created after the check, is
//! refused by the operating system's resolution, not by a string comparison.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use toolgate::ToolError;
use unicode_normalization::UnicodeNormalization;

use super::error::{FileError, path_not_allowed};

/// Limits of the file tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimits {
    /// Most bytes `read_file` returns (default 1 MiB).
    pub max_read_bytes: u64,
    /// Most bytes `write_file` writes (default 10 MiB).
    pub max_write_bytes: u64,
    /// Most entries `list_directory` and `search_files` return (default 1,000).
    pub max_entries: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_read_bytes: 1024 * 1024,
            max_write_bytes: 10 * 1024 * 1024,
            max_entries: 1000,
        }
    }
}

/// One allowed folder.
pub(crate) struct Root {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) dir: Dir,
}

/// The allowed folders. With one root, paths are relative to it; with several, a path's
/// first name picks the root (`"shared/notes.txt"`).
pub struct Sandbox {
    roots: Vec<Root>,
    pub(crate) limits: FileLimits,
}

/// Characters that look like a dot or a slash but are not: refused in paths, so a model (or
/// a person reading the log) cannot be fooled about where a path leads.
const LOOKALIKES: &[char] = &[
    '\u{2024}', '\u{2025}', '\u{2026}', '\u{FF0E}', '\u{FE52}', '\u{3002}',
    '\u{FF61}', // dots
    '\u{2215}', '\u{2044}', '\u{FF0F}', '\u{29F8}', '\u{2571}', '\u{FF3C}', '\u{29F5}',
    '\u{2216}', // slashes
];

impl Sandbox {
    /// A sandbox with one root folder, which must exist.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let path = root.as_ref().to_path_buf();
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".into());
        Ok(Sandbox {
            roots: vec![open_root(name, path)?],
            limits: FileLimits::default(),
        })
    }

    /// Adds another root, addressed by `name` as a path's first component.
    pub fn with_root(
        mut self,
        name: impl Into<String>,
        path: impl AsRef<Path>,
    ) -> io::Result<Self> {
        self.roots
            .push(open_root(name.into(), path.as_ref().to_path_buf())?);
        Ok(self)
    }

    /// Sets the limits.
    pub fn with_limits(mut self, limits: FileLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The root and the checked relative path a model's path stands for.
    pub(crate) fn resolve(&self, path: &str) -> Result<(&Root, PathBuf), ToolError> {
        let components = check_text(path)?;
        if self.roots.len() == 1 {
            return Ok((&self.roots[0], components.iter().collect()));
        }
        let names: Vec<&str> = self.roots.iter().map(|root| root.name.as_str()).collect();
        let Some((first, rest)) = components.split_first() else {
            return Err(path_not_allowed(
                path,
                &format!(
                    "start the path with one of the folders: {}",
                    names.join(", ")
                ),
            ));
        };
        let root = self
            .roots
            .iter()
            .find(|root| root.name == *first)
            .ok_or_else(|| {
                path_not_allowed(
                    path,
                    &format!(
                        "\"{first}\" is not an allowed folder; use one of: {}",
                        names.join(", ")
                    ),
                )
            })?;
        Ok((root, rest.iter().collect()))
    }

    /// A folder inside the sandbox for a program's working directory: opened (so it stays
    /// the folder that was checked, whatever is renamed or swapped later) and its real path.
    pub(crate) fn directory(&self, path: &str) -> Result<(Dir, PathBuf), ToolError> {
        let (root, relative) = self.resolve(path)?;
        let shown = self.display(root, &relative);
        if relative.as_os_str().is_empty() {
            let opened = root
                .dir
                .try_clone()
                .map_err(|error| io_error(&shown, error))?;
            return Ok((opened, root.path.clone()));
        }
        let link = root
            .dir
            .symlink_metadata(&relative)
            .map_err(|error| io_error(&shown, error))?;
        if !link.is_dir() {
            return Err(super::error::coded(
                "not_a_directory",
                format!("`{shown}` is not a directory"),
            ));
        }
        // cap-std refuses any step of the path that would leave the root, also one swapped in
        // after the check above.
        let opened = root
            .dir
            .open_dir(&relative)
            .map_err(|error| io_error(&shown, error))?;
        Ok((opened, root.path.join(relative)))
    }

    /// A path for messages: the root's name and the relative path.
    pub(crate) fn display(&self, root: &Root, relative: &Path) -> String {
        let relative = relative.to_string_lossy();
        match (self.roots.len(), relative.is_empty()) {
            (1, true) => ".".to_owned(),
            (1, false) => relative.into_owned(),
            (_, true) => root.name.clone(),
            (_, false) => format!("{}/{relative}", root.name),
        }
    }
}

fn open_root(name: String, path: PathBuf) -> io::Result<Root> {
    let dir = Dir::open_ambient_dir(&path, ambient_authority())?;
    Ok(Root { name, path, dir })
}

/// The path's names, or why it is refused.
fn check_text(path: &str) -> Result<Vec<String>, ToolError> {
    if path.contains('\0') {
        return Err(path_not_allowed(path, "the path contains a NUL byte"));
    }
    if path.chars().any(char::is_control) {
        return Err(path_not_allowed(
            path,
            "the path contains control characters",
        ));
    }
    if path.contains('\\') || has_drive_letter(path) {
        return Err(path_not_allowed(
            path,
            "Windows-style paths are not accepted; separate names with `/`, relative to the sandbox",
        ));
    }
    if path.starts_with('/') || path.starts_with('~') {
        return Err(path_not_allowed(
            path,
            "absolute paths are not allowed; give a path relative to the sandbox",
        ));
    }
    if path.contains(LOOKALIKES) {
        return Err(path_not_allowed(
            path,
            "the path contains a character that looks like `.` or `/` but is not",
        ));
    }
    let mut names = Vec::new();
    for name in path.split('/') {
        let normalized: String = name.nfkc().collect();
        if normalized != name && (normalized.contains(['/', '.']) || normalized.trim().is_empty()) {
            return Err(path_not_allowed(
                path,
                "the path contains a character that looks like `.` or `/` but is not",
            ));
        }
        match name {
            "" | "." => {}
            ".." => {
                return Err(path_not_allowed(
                    path,
                    "`..` is not allowed: paths stay inside the sandbox",
                ));
            }
            _ => names.push(name.to_owned()),
        }
    }
    Ok(names)
}

fn has_drive_letter(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Maps an I/O error of an operation on `shown` to the error the model sees.
pub(crate) fn io_error(shown: &str, error: io::Error) -> ToolError {
    FileError::from_io(shown, &error).into()
}
