//! Files inside a [`Sandbox`]: read, write, list, search, create, delete and move.
//!
//! Register the sandbox as state and give each tool its permission:
//! `.state(Sandbox::new(root)?).tool(files::read_file_tool().permission("staff"))`.

mod change;
mod error;
mod sandbox;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use cap_std::fs::Dir;
use globset::Glob;
use serde::Serialize;
use serde_json::{Value, json};
use toolgate::ToolTemplate;
use toolgate::prelude::*;

pub use sandbox::{FileLimits, Sandbox};

use error::coded;
use sandbox::Root;
pub(crate) use sandbox::io_error;

/// Bytes looked at to tell text from binary.
const SNIFF_BYTES: usize = 8192;

/// Every file tool, to give them one permission: `files::tools().map(|t| t.permission(..))`.
/// Their results (a file's content, names in a folder) are data from outside
/// ([`ToolTemplate::untrusted_results`]).
pub fn tools() -> [ToolTemplate; 7] {
    [
        read_file_tool(),
        write_file_tool(),
        list_directory_tool(),
        search_files_tool(),
        create_directory_tool(),
        delete_directory_tool(),
        move_path_tool(),
    ]
    .map(ToolTemplate::untrusted_results)
}

/// Read a text file from the sandbox. Binary files are reported, not shown.
#[tool(manual, group = "files", read_only, idempotent)]
pub fn read_file(
    /// Path relative to the sandbox, e.g. "notes/todo.txt".
    path: String,
    /// Read at most this many bytes (a larger file is cut there and marked truncated).
    #[schemars(range(min = 1))]
    max_bytes: Option<u64>,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let (root, relative) = sandbox.resolve(&path)?;
    let shown = sandbox.display(root, &relative);
    let metadata = root
        .dir
        .metadata(&relative)
        .map_err(|error| io_error(&shown, error))?;
    if metadata.is_dir() {
        return Err(coded(
            "is_a_directory",
            format!("`{shown}` is a directory; use list_directory"),
        ));
    }
    let size = metadata.len();
    let limit = sandbox.limits.max_read_bytes;
    let wanted = max_bytes.unwrap_or(size).min(limit);
    if max_bytes.is_none() && size > limit {
        return Err(coded(
            "too_large",
            format!(
                "`{shown}` is {size} bytes, over the limit of {limit}; pass `max_bytes` to read its beginning"
            ),
        ));
    }
    let file = root
        .dir
        .open(&relative)
        .map_err(|error| io_error(&shown, error))?;
    let mut bytes = Vec::new();
    file.take(wanted)
        .read_to_end(&mut bytes)
        .map_err(|error| io_error(&shown, error))?;
    if is_binary(&bytes) {
        return Ok(json!({"path": shown, "size": size, "binary": true, "content": null}));
    }
    let content = String::from_utf8_lossy(&bytes).into_owned();
    Ok(
        json!({"path": shown, "size": size, "binary": false, "truncated": (bytes.len() as u64) < size, "content": content}),
    )
}

fn is_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    head.contains(&0) || std::str::from_utf8(head).is_err_and(|error| error.error_len().is_some())
}

/// Write a text file in the sandbox, replacing it if it exists. The file is replaced whole
/// (written to a new file, then renamed over the old one) and is never executable.
#[tool(manual, group = "files", idempotent, destructive)]
pub fn write_file(
    /// Path relative to the sandbox.
    path: String,
    /// The whole new content.
    content: String,
    /// Create missing parent folders.
    #[serde(default)]
    create_parents: bool,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let (root, relative) = sandbox.resolve_for_change(&path)?;
    let shown = sandbox.display(root, &relative);
    let limit = sandbox.limits.max_write_bytes;
    if content.len() as u64 > limit {
        return Err(coded(
            "too_large",
            format!(
                "the content is {} bytes, over the limit of {limit}",
                content.len()
            ),
        ));
    }
    if relative.as_os_str().is_empty() {
        return Err(coded(
            "is_a_directory",
            "the sandbox root is a directory".into(),
        ));
    }
    if create_parents
        && let Some(parent) = relative
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
    {
        root.dir
            .create_dir_all(parent)
            .map_err(|error| io_error(&shown, error))?;
    }
    match root.dir.symlink_metadata(&relative) {
        Ok(existing) if existing.is_dir() => {
            return Err(coded("is_a_directory", format!("`{shown}` is a directory")));
        }
        Ok(existing) if existing.is_symlink() => {
            return Err(coded(
                "path_not_allowed",
                format!("`{shown}` is a symbolic link; write to the file itself"),
            ));
        }
        _ => {}
    }
    let parent = relative.parent().unwrap_or(Path::new(""));
    let folder = open_dir(root, parent, &shown).map_err(|error| {
        if error.code.as_str() == "not_found" {
            coded(
                "not_found",
                format!("the folder of `{shown}` does not exist; pass `create_parents: true`"),
            )
        } else {
            error
        }
    })?;
    let name = Path::new(relative.file_name().unwrap_or_default());
    change::replace_file(&folder, name, content.as_bytes())
        .map_err(|error| io_error(&shown, error))?;
    Ok(json!({"path": shown, "bytes_written": content.len()}))
}

/// One entry of a directory listing.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// `file`, `directory` or `symlink`.
    pub kind: &'static str,
    /// Size in bytes (files).
    pub size: u64,
}

/// List a directory of the sandbox.
#[tool(manual, group = "files", read_only, idempotent)]
pub fn list_directory(
    /// Path relative to the sandbox; "." for its top.
    #[serde(default = "top")]
    path: String,
    /// Include names starting with a dot.
    #[serde(default)]
    include_hidden: bool,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let (root, relative) = sandbox.resolve(&path)?;
    let shown = sandbox.display(root, &relative);
    let dir = open_dir(root, &relative, &shown)?;
    let mut entries = Vec::new();
    let mut truncated = false;
    for entry in dir.entries().map_err(|error| io_error(&shown, error))? {
        let entry = entry.map_err(|error| io_error(&shown, error))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !include_hidden && name.starts_with('.') {
            continue;
        }
        if entries.len() == sandbox.limits.max_entries {
            truncated = true;
            break;
        }
        let file_type = entry.file_type().map_err(|error| io_error(&shown, error))?;
        let kind = if file_type.is_symlink() {
            "symlink"
        } else if file_type.is_dir() {
            "directory"
        } else {
            "file"
        };
        let size = if kind == "file" {
            entry.metadata().map(|metadata| metadata.len()).unwrap_or(0)
        } else {
            0
        };
        entries.push(Entry { name, kind, size });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(json!({"path": shown, "entries": entries, "truncated": truncated}))
}

fn top() -> String {
    ".".to_owned()
}

fn open_dir(root: &Root, relative: &Path, shown: &str) -> Result<Dir, ToolError> {
    if relative.as_os_str().is_empty() {
        return root.dir.try_clone().map_err(|error| io_error(shown, error));
    }
    root.dir
        .open_dir(relative)
        .map_err(|error| io_error(shown, error))
}

/// A file that matched a search.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Found {
    /// Path relative to the sandbox.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Last modification, seconds since the Unix epoch.
    pub modified: Option<u64>,
}

/// Find files whose path matches a glob, e.g. "**/*.md", searching folders recursively.
#[tool(manual, group = "files", read_only, idempotent)]
pub fn search_files(
    /// Glob over paths relative to the searched folder: `*`, `?`, `**`, `[abc]`, `{a,b}`.
    #[schemars(length(min = 1, max = 500))]
    pattern: String,
    /// Folder to search, relative to the sandbox.
    #[serde(default = "top")]
    path: String,
    /// Stop after this many matches.
    #[schemars(range(min = 1, max = 10000))]
    max_results: Option<usize>,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let matcher = Glob::new(&pattern)
        .map_err(|error| {
            ToolError::invalid_arguments(format!("`{pattern}` is not a valid glob: {error}"))
        })?
        .compile_matcher();
    let (root, relative) = sandbox.resolve(&path)?;
    let shown = sandbox.display(root, &relative);
    let limit = max_results.unwrap_or(100).min(sandbox.limits.max_entries);
    let mut found = Vec::new();
    let mut pending = vec![(open_dir(root, &relative, &shown)?, PathBuf::new())];
    'walk: while let Some((dir, prefix)) = pending.pop() {
        for entry in dir.entries().map_err(|error| io_error(&shown, error))? {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            let path = prefix.join(&name);
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            // Symlinks are not followed: a search never wanders outside.
            if file_type.is_dir() {
                if let Ok(child) = entry.open_dir() {
                    pending.push((child, path));
                }
                continue;
            }
            if file_type.is_file() && matcher.is_match(&path) {
                let metadata = entry.metadata().ok();
                let modified = metadata
                    .as_ref()
                    .and_then(|metadata| metadata.modified().ok())
                    .and_then(|time| time.into_std().duration_since(UNIX_EPOCH).ok())
                    .map(|since| since.as_secs());
                let size = metadata.map(|metadata| metadata.len()).unwrap_or(0);
                found.push(Found {
                    path: sandbox.display(root, &relative.join(&path)),
                    size,
                    modified,
                });
                if found.len() == limit {
                    break 'walk;
                }
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    let truncated = found.len() == limit;
    Ok(json!({"matches": found, "truncated": truncated}))
}

/// Create a directory (and its missing parents) in the sandbox.
#[tool(manual, group = "files", idempotent)]
pub fn create_directory(
    /// Path relative to the sandbox.
    path: String,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let (root, relative) = sandbox.resolve_for_change(&path)?;
    let shown = sandbox.display(root, &relative);
    if root.dir.exists(&relative) {
        return Err(coded("already_exists", format!("`{shown}` already exists")));
    }
    root.dir
        .create_dir_all(&relative)
        .map_err(|error| io_error(&shown, error))?;
    Ok(json!({"created": shown}))
}

/// Delete a directory of the sandbox; with `recursive`, everything in it too.
#[tool(manual, group = "files", destructive)]
pub fn delete_directory(
    /// Path relative to the sandbox.
    path: String,
    /// Also delete its contents.
    #[serde(default)]
    recursive: bool,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let (root, relative) = sandbox.resolve_for_change(&path)?;
    let shown = sandbox.display(root, &relative);
    if relative.as_os_str().is_empty() {
        return Err(coded(
            "path_not_allowed",
            "the sandbox root itself cannot be deleted".into(),
        ));
    }
    let metadata = root
        .dir
        .symlink_metadata(&relative)
        .map_err(|error| io_error(&shown, error))?;
    if !metadata.is_dir() {
        return Err(coded(
            "not_a_directory",
            format!("`{shown}` is not a directory"),
        ));
    }
    let removed = if recursive {
        root.dir.remove_dir_all(&relative)
    } else {
        root.dir.remove_dir(&relative)
    };
    removed.map_err(|error| io_error(&shown, error))?;
    Ok(json!({"deleted": shown, "recursive": recursive}))
}

/// Move or rename a file or directory within the sandbox. Symbolic links (and folders
/// holding them) are not moved, and what is moved is not executable afterwards.
#[tool(manual, group = "files", destructive)]
pub fn move_path(
    /// What to move, relative to the sandbox.
    from: String,
    /// Where to, relative to the sandbox (its folder must exist).
    to: String,
    /// Replace an existing file at `to`.
    #[serde(default)]
    overwrite: bool,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let (from_root, from_relative) = sandbox.resolve_for_change(&from)?;
    let (to_root, to_relative) = sandbox.resolve_for_change(&to)?;
    let (from_shown, to_shown) = (
        sandbox.display(from_root, &from_relative),
        sandbox.display(to_root, &to_relative),
    );
    if from_relative.as_os_str().is_empty() || to_relative.as_os_str().is_empty() {
        return Err(coded(
            "path_not_allowed",
            "the sandbox root itself cannot be moved or replaced".into(),
        ));
    }
    let unmovable = change::unmovable(&from_root.dir, &from_relative)
        .map_err(|error| io_error(&from_shown, error))?;
    if let Some(why) = unmovable {
        return Err(coded(
            "path_not_allowed",
            format!("`{from_shown}` cannot be moved: {why}"),
        ));
    }
    if !overwrite && to_root.dir.symlink_metadata(&to_relative).is_ok() {
        return Err(coded(
            "already_exists",
            format!("`{to_shown}` already exists; pass `overwrite: true` to replace it"),
        ));
    }
    from_root
        .dir
        .rename(&from_relative, &to_root.dir, &to_relative)
        .map_err(|error| io_error(&format!("{from_shown} → {to_shown}"), error))?;
    change::clear_execute_bits(&to_root.dir, &to_relative)
        .map_err(|error| io_error(&to_shown, error))?;
    Ok(json!({"moved": from_shown, "to": to_shown}))
}
