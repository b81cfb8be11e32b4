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
    /// Its real path (what programs are confined to).
    #[cfg_attr(not(feature = "programs"), allow(dead_code))]
    pub(crate) path: PathBuf,
    pub(crate) dir: Dir,
}

/// The allowed folders. With one root, paths are relative to it; with several, a path's
/// first name picks the root (`"shared/notes.txt"`).
pub struct Sandbox {
    roots: Vec<Root>,
    pub(crate) limits: FileLimits,
    /// Names no file tool may create, change, move or delete anything under.
    protected: Vec<String>,
}

/// Folders that programs read as configuration or code (git runs what `.git/config` and
/// `.git/hooks` name): written by a file tool, they would let the next harmless-looking
/// program run anything.
const PROTECTED_BY_DEFAULT: &[&str] = &[".git"];

/// Characters a path separator or dot could hide behind.
const PATH_PUNCTUATION: [char; 3] = ['.', '/', '\\'];

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
            protected: PROTECTED_BY_DEFAULT
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
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

    /// The names under which file tools change nothing (default: `.git`, whose config and
    /// hooks git obeys). Compared without regard to case. Reading stays allowed.
    pub fn with_protected<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protected = names.into_iter().map(Into::into).collect();
        self
    }

    /// Like [`resolve`](Self::resolve), for a path a tool will create, change, move or
    /// delete: refused under a protected name.
    pub(crate) fn resolve_for_change(&self, path: &str) -> Result<(&Root, PathBuf), ToolError> {
        let (root, relative) = self.resolve(path)?;
        let protected = relative.components().find_map(|part| {
            let part = part.as_os_str().to_string_lossy();
            self.protected
                .iter()
                .find(|name| name.eq_ignore_ascii_case(&part))
        });
        if let Some(name) = protected {
            return Err(path_not_allowed(
                path,
                &format!(
                    "nothing under `{name}` may be changed by file tools (programs read it as configuration)"
                ),
            ));
        }
        Ok((root, relative))
    }

    /// The roots' folders (what a confined program may write).
    #[cfg(feature = "programs")]
    pub(crate) fn root_paths(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|root| root.path.clone()).collect()
    }

    /// The text checks every sandbox path passes (for paths given to programs).
    #[cfg(feature = "programs")]
    pub(crate) fn check_path_text(&self, path: &str) -> Result<(), ToolError> {
        check_text(path).map(drop)
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
    #[cfg(feature = "programs")]
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
    if let Some(hidden) = path.chars().find(|c| is_invisible(*c)) {
        return Err(path_not_allowed(
            path,
            &format!(
                "the path contains an invisible or text-direction character (U+{:04X})",
                u32::from(hidden)
            ),
        ));
    }
    let mut names = Vec::new();
    for name in path.split('/') {
        if looks_like_more_punctuation(name) || reads_as_dots(name) {
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

/// Characters that show nothing, or change the order text is shown in: a path with one does
/// not read as what it is. Format characters (zero-width spaces and joiners, direction
/// marks and overrides, the BOM), line and paragraph separators, spaces other than the
/// ASCII one, private-use and unassigned characters, and the fillers that render blank.
fn is_invisible(c: char) -> bool {
    use unicode_general_category::{GeneralCategory as Category, get_general_category};
    let category = get_general_category(c);
    matches!(
        category,
        Category::Format
            | Category::LineSeparator
            | Category::ParagraphSeparator
            | Category::PrivateUse
            | Category::Unassigned
            | Category::Surrogate
    ) || (category == Category::SpaceSeparator && c != ' ')
        || matches!(
            c,
            '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}' | '\u{034F}'
        )
}

/// Whether a name would read with more dots or slashes than it has: under compatibility
/// normalization (`．` is `.`) or Unicode's confusables data (`ꓸ`, `܁` and `․` look like
/// `.`, `⟋` and `∕` like `/`).
fn looks_like_more_punctuation(name: &str) -> bool {
    let count = |text: &mut dyn Iterator<Item = char>| {
        text.filter(|c| PATH_PUNCTUATION.contains(c)).count()
    };
    let literal = count(&mut name.chars());
    literal < count(&mut name.nfkc()) || literal < count(&mut unicode_security::skeleton(name))
}

/// Full stops of other scripts that neither normalization nor the confusables data make a
/// `.` (`。` ideographic, `｡` halfwidth, `۔` Arabic, `։` Armenian, `።` Ethiopic, ...).
const OTHER_FULL_STOPS: [char; 13] = [
    '\u{3002}', '\u{FF61}', '\u{FE12}', '\u{2E3C}', '\u{06D4}', '\u{0589}', '\u{1362}', '\u{166E}',
    '\u{1803}', '\u{1809}', '\u{A4FF}', '\u{A60E}', '\u{A6F3}',
];

/// Whether a name is made of full stops alone, one of them not `.`: it reads as `.` or
/// `..` to a person reviewing the call (a name with other text, `会議。メモ.txt`, does not).
fn reads_as_dots(name: &str) -> bool {
    let full_stop = |c: char| c == '.' || OTHER_FULL_STOPS.contains(&c);
    name.chars().all(full_stop) && name.chars().any(|c| c != '.')
}

fn has_drive_letter(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Maps an I/O error of an operation on `shown` to the error the model sees.
pub(crate) fn io_error(shown: &str, error: io::Error) -> ToolError {
    FileError::from_io(shown, &error).into()
}
