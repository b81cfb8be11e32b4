//! Starting one program: no shell, a scrubbed environment, a private `TMPDIR`, a working
//! folder inside the sandbox, Landlock confinement where the kernel has it, optional stdin,
//! capped output and a time limit after which it is killed. `run_command` and the command
//! tools of tool files both start programs here.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use cap_std::fs::Dir;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use toolgate::{ErrorCode, ToolError};

use super::SAFE_PATH;
use super::confine::{self, Confinement};
use super::scratch::Scratch;
use crate::files::Sandbox;

/// What to start and how.
pub(crate) struct Launch<'a> {
    /// The program's name, for messages.
    pub(crate) name: &'a str,
    pub(crate) executable: PathBuf,
    pub(crate) args: &'a [String],
    /// The working folder, opened and checked inside the sandbox.
    pub(crate) folder: &'a Dir,
    pub(crate) folder_path: PathBuf,
    /// Variables set beside `PATH`, `HOME`, `LANG` and `TMPDIR`.
    pub(crate) env: Vec<(String, String)>,
    /// Folders (or files) the program may execute besides itself.
    pub(crate) exec_paths: Vec<PathBuf>,
    /// Written to the program's stdin, which is then closed (`None`: `/dev/null`).
    pub(crate) stdin: Option<Vec<u8>>,
    pub(crate) timeout: Duration,
    pub(crate) max_output_bytes: usize,
    pub(crate) confine: bool,
    pub(crate) sandbox: &'a Sandbox,
}

/// How a program ended: its status, its output (text, whether cut) and its confinement.
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: (String, bool),
    pub(crate) stderr: (String, bool),
    pub(crate) confinement: Confinement,
}

/// Starts the program and waits for it, at most `timeout`.
pub(crate) async fn launch(launch: Launch<'_>) -> Result<Finished, ToolError> {
    let name = launch.name;
    let scratch = Scratch::new().map_err(|error| {
        ToolError::execution(format!("no temporary folder for `{name}`: {error}"))
    })?;
    let mut command = std::process::Command::new(&launch.executable);
    command
        .args(launch.args)
        .current_dir(start_folder(launch.folder, launch.folder_path))
        .env_clear()
        .env("PATH", SAFE_PATH)
        .env("HOME", "/nonexistent")
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", scratch.path())
        .envs(launch.env)
        .stdin(if launch.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut executable = vec![launch.executable];
    executable.extend(launch.exec_paths);
    let mut writable = launch.sandbox.root_paths();
    writable.push(scratch.path().to_owned());
    let reach = confine::Reach {
        writable,
        executable,
    };
    let started = if launch.confine {
        confine::spawn(command, reach).await
    } else {
        command.spawn().map(|child| (child, Confinement::None))
    };
    let (child, confinement) = started
        .map_err(|error| ToolError::execution(format!("`{name}` could not be started: {error}")))?;
    let mut child = Running(child);
    let stdin = feed(child.0.stdin.take(), launch.stdin);
    let cap = launch.max_output_bytes;
    let stdout = read_capped(
        child
            .0
            .stdout
            .take()
            .and_then(|out| tokio::process::ChildStdout::from_std(out).ok()),
        cap,
    );
    let stderr = read_capped(
        child
            .0
            .stderr
            .take()
            .and_then(|err| tokio::process::ChildStderr::from_std(err).ok()),
        cap,
    );
    let finished = async {
        let ((), stdout, stderr, status) = tokio::join!(stdin, stdout, stderr, child.wait());
        (stdout, stderr, status)
    };
    let Ok((stdout, stderr, status)) = tokio::time::timeout(launch.timeout, finished).await else {
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "`{name}` did not finish within {} s and was stopped",
                launch.timeout.as_secs_f64()
            ),
        ));
    };
    let status =
        status.map_err(|error| ToolError::execution(format!("`{name}` failed: {error}")))?;
    Ok(Finished {
        status,
        stdout,
        stderr,
        confinement,
    })
}

/// Writes `input` to the program's stdin and closes it. A program that exits without
/// reading it all is not an error here (its exit status says what happened).
async fn feed(stdin: Option<std::process::ChildStdin>, input: Option<Vec<u8>>) {
    let (Some(stdin), Some(input)) = (stdin, input) else {
        return;
    };
    if let Ok(mut stdin) = tokio::process::ChildStdin::from_std(stdin) {
        let _ = stdin.write_all(&input).await;
        let _ = stdin.shutdown().await;
    }
}

/// A started program, killed if it is still running when dropped (timeout, cancellation).
pub(crate) struct Running(pub(crate) std::process::Child);

impl Running {
    /// Waits without blocking the runtime: the program's exit is polled.
    pub(crate) async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        loop {
            if let Some(status) = self.0.try_wait()? {
                return Ok(status);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Where the program starts. On Linux, the folder opened and checked before, named through
/// `/proc/self/fd`: the child changes into it before `exec`, while it still holds the
/// descriptor, so a folder swapped for a symlink after the check is not followed. Elsewhere
/// (or without `/proc`), the folder's path.
pub(crate) fn start_folder(folder: &Dir, path: PathBuf) -> PathBuf {
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
pub(crate) async fn read_capped(
    stream: Option<impl AsyncRead + Unpin>,
    cap: usize,
) -> (String, bool) {
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
