//! Running programs from an allowlist: no shell, arguments as a list, a working directory
//! inside the sandbox, a timeout and an output cap. Critical risk: the default policy asks
//! a person first.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use cap_std::fs::Dir;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use toolgate::prelude::*;

use crate::files::Sandbox;

/// What `run_command` may run and how.
#[derive(Debug, Clone)]
pub struct CommandConfig {
    /// Program names (looked up on `PATH`) or absolute paths that may be run. Nothing else.
    pub allowed: Vec<String>,
    /// Time limit of one run (default 30 s); the program is killed after it.
    pub timeout: Duration,
    /// Most bytes kept of stdout and of stderr each (default 64 KiB).
    pub max_output_bytes: usize,
}

impl CommandConfig {
    /// Allows exactly these programs.
    pub fn allow<I, S>(programs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CommandConfig {
            allowed: programs.into_iter().map(Into::into).collect(),
            timeout: Duration::from_secs(30),
            max_output_bytes: 64 * 1024,
        }
    }
}

/// Run an allowed program with arguments (no shell: `|`, `;`, `$()` are plain text) in a
/// folder of the sandbox, and report its exit code and output.
#[tool(manual, group = "programs", risk = "critical", open_world)]
pub async fn run_command(
    /// The program's name, e.g. "git"; it must be on the application's allowlist.
    program: String,
    /// Its arguments, one string each.
    #[serde(default)]
    args: Vec<String>,
    /// Working folder, relative to the sandbox ("." by default).
    cwd: Option<String>,
    #[ctx] config: State<CommandConfig>,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    if !config.allowed.contains(&program) {
        return Err(ToolError::new(
            "program_not_allowed",
            format!(
                "`{program}` is not on the allowlist; allowed: {}",
                config.allowed.join(", ")
            ),
        ));
    }
    let (folder, folder_path) = sandbox.directory(cwd.as_deref().unwrap_or("."))?;
    let mut child = Command::new(&program)
        .args(&args)
        .current_dir(start_folder(&folder, folder_path))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| {
            ToolError::execution(format!("`{program}` could not be started: {error}"))
        })?;
    let cap = config.max_output_bytes;
    let stdout = read_capped(child.stdout.take(), cap);
    let stderr = read_capped(child.stderr.take(), cap);
    let run = async {
        let (stdout, stderr, status) = tokio::join!(stdout, stderr, child.wait());
        (stdout, stderr, status)
    };
    let Ok((stdout, stderr, status)) = tokio::time::timeout(config.timeout, run).await else {
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "`{program}` did not finish within {} s and was stopped",
                config.timeout.as_secs_f64()
            ),
        ));
    };
    let status =
        status.map_err(|error| ToolError::execution(format!("`{program}` failed: {error}")))?;
    Ok(json!({
        "exit_code": status.code(),
        "success": status.success(),
        "stdout": stdout.0,
        "stdout_truncated": stdout.1,
        "stderr": stderr.0,
        "stderr_truncated": stderr.1,
    }))
}

/// Where the program starts. On Linux, the folder opened and checked before, named through
/// `/proc/self/fd`: the child changes into it before `exec`, while it still holds the
/// descriptor, so a folder swapped for a symlink after the check is not followed. Elsewhere
/// (or without `/proc`), the folder's path.
fn start_folder(folder: &Dir, path: PathBuf) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let through_descriptor = PathBuf::from(format!("/proc/self/fd/{}", folder.as_raw_fd()));
        if through_descriptor.is_dir() {
            return through_descriptor;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = folder;
    path
}

/// Reads a stream to the end, keeping at most `cap` bytes (the rest is drained, so the
/// program is not blocked on a full pipe).
async fn read_capped(stream: Option<impl AsyncRead + Unpin>, cap: usize) -> (String, bool) {
    let Some(mut stream) = stream else {
        return (String::new(), false);
    };
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    let mut truncated = false;
    while let Ok(read) = stream.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buffer[..read.min(room)]);
        truncated |= read > room;
    }
    (String::from_utf8_lossy(&kept).into_owned(), truncated)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The race the descriptor closes: the checked folder is swapped for a symlink to
    /// somewhere else between the check and the start of the program.
    #[tokio::test]
    async fn a_folder_swapped_after_the_check_is_not_followed() {
        let sandbox_root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(sandbox_root.path().join("work")).unwrap();
        std::fs::write(sandbox_root.path().join("work/inside.txt"), "").unwrap();
        std::fs::write(outside.path().join("secret.txt"), "").unwrap();
        let sandbox = Sandbox::new(sandbox_root.path()).unwrap();

        let (folder, path) = sandbox.directory("work").unwrap();
        std::fs::rename(
            sandbox_root.path().join("work"),
            sandbox_root.path().join("moved"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), sandbox_root.path().join("work")).unwrap();

        let listed = Command::new("ls")
            .current_dir(start_folder(&folder, path))
            .output()
            .await
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&listed.stdout), "inside.txt\n");
    }
}
