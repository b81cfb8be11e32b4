//! Running programs from an allowlist: each program with an argument policy (deny by
//! default), no shell, a scrubbed environment, a working folder inside the sandbox, Landlock
//! confinement where the kernel has it, a timeout and an output cap. Critical risk: the
//! default policy asks a person first, and the person is shown the exact command line, the
//! working folder and what the policy allowed.

pub(crate) mod confine;
pub(crate) mod launch;
mod policy;
mod presets;
pub(crate) mod scratch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cap_std::fs::Dir;
use serde_json::{Value, json};
use toolgate::prelude::*;
use toolgate::{ToolResult, ToolTemplate};

use crate::files::Sandbox;

pub use confine::Confinement;
pub use policy::{ArgKind, ProgramPolicy};

/// The only `PATH` programs are looked up on and started with.
pub(crate) const SAFE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// What `run_command` may run and how.
///
/// ```
/// use toolgate_tools::programs::{ArgKind, CommandConfig, ProgramPolicy};
///
/// let config = CommandConfig::new()
///     .program("git", ProgramPolicy::git_read_only())
///     .program("ls", ProgramPolicy::ls())
///     .program("echo", ProgramPolicy::new().positionals(ArgKind::Text));
/// # let _ = config;
/// ```
#[derive(Debug, Clone)]
pub struct CommandConfig {
    programs: BTreeMap<String, ProgramPolicy>,
    /// Time limit of one run (default 30 s); the program is killed after it.
    pub timeout: Duration,
    /// Most bytes kept of stdout and of stderr each (default 64 KiB).
    pub max_output_bytes: usize,
    /// Confine programs with Landlock where the kernel has it (default: yes). Off leaves the
    /// argument policy, the scrubbed environment and the working folder as the only guards.
    pub confine: bool,
}

impl Default for CommandConfig {
    fn default() -> Self {
        CommandConfig::new()
    }
}

impl CommandConfig {
    /// Allows no program yet.
    pub fn new() -> Self {
        CommandConfig {
            programs: BTreeMap::new(),
            timeout: Duration::from_secs(30),
            max_output_bytes: 64 * 1024,
            confine: true,
        }
    }

    /// Allows a program (a name looked up on `/usr/local/bin:/usr/bin:/bin`, never on the
    /// caller's `PATH` or in the sandbox) with the arguments its policy allows.
    pub fn program(mut self, name: impl Into<String>, policy: ProgramPolicy) -> Self {
        self.programs.insert(name.into(), policy);
        self
    }

    /// The allowed programs' names.
    pub fn programs(&self) -> impl Iterator<Item = &str> {
        self.programs.keys().map(String::as_str)
    }
}

/// `run_command`, with a review that shows approvers the exact command and refuses what
/// the argument policy does not allow before anyone is asked.
pub fn run_command_tool() -> ToolTemplate {
    run_command_unreviewed_tool().with_review(review_command)
}

/// Run an allowed program with arguments (no shell: `|`, `;`, `$()` are plain text) in a
/// folder of the sandbox, and report its exit code and output. Each program accepts only
/// the subcommands, flags and arguments its policy allows.
#[tool(
    manual,
    name = "run_command",
    group = "programs",
    risk = "critical",
    open_world
)]
pub async fn run_command_unreviewed(
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
    let checked = check(&config, &sandbox, &program, &args, cwd.as_deref())?;
    run(&config, &sandbox, checked).await
}

/// A command that passed the allowlist and its program's policy.
struct Checked {
    program: String,
    executable: PathBuf,
    args: Vec<String>,
    folder: Dir,
    folder_path: PathBuf,
    shown_folder: String,
    policy: ProgramPolicy,
    allowed: Vec<String>,
}

fn check(
    config: &CommandConfig,
    sandbox: &Sandbox,
    program: &str,
    args: &[String],
    cwd: Option<&str>,
) -> Result<Checked, ToolError> {
    let not_allowed = || {
        let names: Vec<&str> = config.programs().collect();
        ToolError::new(
            "program_not_allowed",
            format!(
                "`{}` is not on the allowlist; allowed: {}",
                crate::quote::beginning(program),
                names.join(", ")
            ),
        )
    };
    let policy = config.programs.get(program).ok_or_else(not_allowed)?;
    let executable = locate(program).ok_or_else(|| {
        ToolError::execution(format!("`{program}` is allowed but is not installed here"))
    })?;
    let shown_folder = cwd.unwrap_or(".").to_owned();
    let (folder, folder_path) = sandbox.directory(&shown_folder)?;
    let (args, allowed) = policy.check(program, args, sandbox, &folder)?;
    Ok(Checked {
        program: program.to_owned(),
        executable,
        args,
        folder,
        folder_path,
        shown_folder,
        policy: policy.clone(),
        allowed,
    })
}

/// The program's file on the fixed `PATH` (a name with a `/` is never looked up).
pub(crate) fn locate(program: &str) -> Option<PathBuf> {
    if program.is_empty() || program.contains('/') {
        return None;
    }
    SAFE_PATH
        .split(':')
        .map(|folder| Path::new(folder).join(program))
        .find(|candidate| candidate.is_file())
}

/// What an approver sees: the exact command line, where it runs, what the policy allowed.
fn review_command(context: &ToolContext, arguments: &Value) -> Result<Value, ToolError> {
    let (Some(config), Some(sandbox)) =
        (context.state::<CommandConfig>(), context.state::<Sandbox>())
    else {
        return Err(ToolError::execution("run_command is not configured"));
    };
    let program = arguments["program"].as_str().unwrap_or_default();
    let args: Vec<String> = arguments["args"]
        .as_array()
        .map(|args| {
            args.iter()
                .filter_map(|arg| arg.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let checked = check(&config, &sandbox, program, &args, arguments["cwd"].as_str())?;
    Ok(json!({
        "command_line": command_line(&checked),
        "executable": checked.executable.display().to_string(),
        "working_folder": checked.shown_folder,
        "allowed_by_policy": checked.allowed,
        "environment": "scrubbed (PATH, HOME, LANG, a private TMPDIR and the program's policy only)",
        "confinement": if cfg!(target_os = "linux") { "landlock where the kernel has it" } else { "none" },
    }))
}

/// The command as a person would type it, each argument quoted where it needs it.
fn command_line(checked: &Checked) -> String {
    std::iter::once(checked.program.as_str())
        .chain(checked.args.iter().map(String::as_str))
        .map(|part| {
            let plain = !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
            if plain {
                part.to_owned()
            } else {
                format!("'{}'", part.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn run(config: &CommandConfig, sandbox: &Sandbox, checked: Checked) -> ToolResult {
    let Checked {
        program,
        executable,
        args,
        folder,
        folder_path,
        policy,
        ..
    } = checked;
    let finished = launch::launch(launch::Launch {
        name: &program,
        executable,
        args: &args,
        folder: &folder,
        folder_path,
        env: policy
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        exec_paths: policy.exec_paths.clone(),
        stdin: None,
        timeout: config.timeout,
        max_output_bytes: config.max_output_bytes,
        confine: config.confine,
        sandbox,
    })
    .await?;
    Ok(json!({
        "exit_code": finished.status.code(),
        "success": finished.status.success(),
        "stdout": finished.stdout.0,
        "stdout_truncated": finished.stdout.1,
        "stderr": finished.stderr.0,
        "stderr_truncated": finished.stderr.1,
        "confinement": finished.confinement.as_str(),
    }))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::launch::start_folder;
    use super::*;
    use tokio::process::Command;

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
