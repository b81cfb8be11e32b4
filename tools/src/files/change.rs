//! Changing files safely: a write replaces the file whole (never through a hard link into a
//! file outside), nothing the tools create or move is executable, and a move never re-aims a
//! symlink.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions};

/// Most entries looked at inside a folder that is moved; a larger one is refused.
const MAX_MOVED_ENTRIES: usize = 10_000;

/// Writes `content` to `name` in `dir` through a new file renamed over it: an existing hard
/// link or symlink at `name` is replaced, not written through, and the new file has mode
/// `0644` whatever the old one had.
pub(crate) fn replace_file(dir: &Dir, name: &Path, content: &[u8]) -> io::Result<()> {
    let temporary = temporary_name(name);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::mode(&mut options, 0o644);
    let written = dir.open_with(&temporary, &options).and_then(|mut file| {
        file.write_all(content)?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| dir.rename(&temporary, dir, name));
    if renamed.is_err() {
        let _ = dir.remove_file(&temporary);
    }
    renamed
}

fn temporary_name(name: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    let base = name.to_string_lossy();
    PathBuf::from(format!(
        ".{base}.toolgate-{}-{unique}.tmp",
        std::process::id()
    ))
}

/// Why `relative` may not be moved: it is a symlink, or a folder holding one (a relative
/// link points elsewhere from a new place, possibly out of the sandbox), or a folder too
/// large to check.
pub(crate) fn unmovable(dir: &Dir, relative: &Path) -> io::Result<Option<String>> {
    let metadata = dir.symlink_metadata(relative)?;
    if metadata.is_symlink() {
        return Ok(Some(
            "it is a symbolic link; links are not moved (from a new place it would point elsewhere)".into(),
        ));
    }
    if !metadata.is_dir() {
        return Ok(None);
    }
    let mut seen = 0usize;
    let mut pending = vec![dir.open_dir(relative)?];
    while let Some(folder) = pending.pop() {
        for entry in folder.entries()? {
            let entry = entry?;
            seen += 1;
            if seen > MAX_MOVED_ENTRIES {
                return Ok(Some(format!(
                    "it holds more than {MAX_MOVED_ENTRIES} entries; move smaller folders"
                )));
            }
            let kind = entry.file_type()?;
            if kind.is_symlink() {
                return Ok(Some(format!(
                    "it holds a symbolic link (`{}`); links are not moved",
                    entry.file_name().to_string_lossy()
                )));
            }
            if kind.is_dir() {
                pending.push(entry.open_dir()?);
            }
        }
    }
    Ok(None)
}

/// Clears the execute bits of `relative` and, for a folder, of every file in it.
pub(crate) fn clear_execute_bits(dir: &Dir, relative: &Path) -> io::Result<()> {
    let metadata = dir.symlink_metadata(relative)?;
    if metadata.is_file() {
        return clear_file_bits(dir, relative, &metadata);
    }
    if !metadata.is_dir() {
        return Ok(());
    }
    let mut pending = vec![dir.open_dir(relative)?];
    while let Some(folder) = pending.pop() {
        for entry in folder.entries()? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let name = PathBuf::from(entry.file_name());
            if kind.is_dir() {
                pending.push(entry.open_dir()?);
            } else if kind.is_file() {
                clear_file_bits(&folder, &name, &entry.metadata()?)?;
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn clear_file_bits(dir: &Dir, name: &Path, metadata: &cap_std::fs::Metadata) -> io::Result<()> {
    use cap_std::fs::{Permissions, PermissionsExt};
    let mode = metadata.permissions().mode();
    if mode & 0o111 == 0 {
        return Ok(());
    }
    // Also drops set-user-id, set-group-id and sticky bits.
    dir.set_permissions(name, Permissions::from_mode(mode & 0o666))
}

#[cfg(not(unix))]
fn clear_file_bits(_: &Dir, _: &Path, _: &cap_std::fs::Metadata) -> io::Result<()> {
    Ok(())
}
