//! Command tools: a program from the tool file, started with its fixed arguments, that reads
//! the call's arguments as JSON on stdin and writes its result on stdout. It is started like
//! `run_command` starts programs (no shell, scrubbed environment, working folder in the
//! sandbox, Landlock, timeout, capped output); the call's arguments never reach its command
//! line. Under Landlock it may also start the system's programs (`/usr/local/bin`,
//! `/usr/bin`, `/bin`) and the files beside it, all confined alike: writing only inside the
//! sandbox and a private `TMPDIR`, and no TCP connections (use an `http` tool for requests,
//! or `[commands] confine = false`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use toolgate::{Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolResult};

use super::environment::interpolate;
use super::spec::{CommandSpec, OutputKind};
use crate::files::Sandbox;
use crate::programs::launch::{Finished, Launch, launch};
use crate::programs::{CommandConfig, SAFE_PATH};

/// Most bytes of stderr quoted in the error of a failed run.
const STDERR_TAIL: usize = 2000;

/// A tool that runs a program (see the module's documentation).
#[derive(Clone)]
pub(crate) struct CommandTool {
    inner: Arc<Inner>,
}

struct Inner {
    definition: ToolDefinition,
    program: PathBuf,
    args: Vec<String>,
    cwd: String,
    output: OutputKind,
    env: Vec<(String, String)>,
    exec_paths: Vec<PathBuf>,
    sandbox: Arc<Sandbox>,
    limits: CommandConfig,
}

impl CommandTool {
    /// The tool; `program` was resolved with [`resolve_program`].
    pub(crate) fn new(
        definition: ToolDefinition,
        spec: &CommandSpec,
        program: PathBuf,
        sandbox: Arc<Sandbox>,
        limits: CommandConfig,
    ) -> Self {
        // What a script usually starts: its interpreter, the system's programs, its helpers
        // beside it. (They are confined like it: write only in the sandbox, no network.)
        let mut exec_paths = interpreters(&program);
        exec_paths.extend(SAFE_PATH.split(':').map(PathBuf::from));
        exec_paths.extend(program.parent().map(Path::to_path_buf));
        CommandTool {
            inner: Arc::new(Inner {
                definition,
                program,
                args: spec.args.clone(),
                cwd: spec.cwd.clone().unwrap_or_else(|| ".".to_owned()),
                output: spec.output,
                env: spec.env.clone().into_iter().collect(),
                exec_paths,
                sandbox,
                limits,
            }),
        }
    }
}

impl Tool for CommandTool {
    fn definition(&self) -> ToolDefinition {
        self.inner.definition.clone()
    }

    fn call(&self, _context: ToolContext, arguments: Value) -> ToolFuture {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move { inner.run(arguments).await })
    }

    /// What an approver is shown: the program, its fixed arguments, where it runs.
    fn review(
        &self,
        _context: &ToolContext,
        _arguments: &Value,
    ) -> Result<Option<Value>, ToolError> {
        let inner = &self.inner;
        Ok(Some(json!({
            "program": inner.program.display().to_string(),
            "args": inner.args,
            "working_folder": inner.cwd,
            "arguments": "as JSON on stdin",
            "environment": "scrubbed (PATH, HOME, LANG, a private TMPDIR and the file's env)",
        })))
    }
}

impl Inner {
    async fn run(&self, arguments: Value) -> ToolResult {
        let name = self.definition.name.as_str();
        let env = self
            .env
            .iter()
            .map(|(key, value)| Ok((key.clone(), interpolate(value)?)))
            .collect::<Result<Vec<_>, ToolError>>()?;
        let (folder, folder_path) = self.sandbox.directory(&self.cwd)?;
        let finished = launch(Launch {
            name,
            executable: self.program.clone(),
            args: &self.args,
            folder: &folder,
            folder_path,
            env,
            exec_paths: self.exec_paths.clone(),
            stdin: Some(arguments.to_string().into_bytes()),
            timeout: self.definition.timeout.unwrap_or(self.limits.timeout),
            max_output_bytes: self.limits.max_output_bytes,
            confine: self.limits.confine,
            sandbox: &self.sandbox,
        })
        .await?;
        if !finished.status.success() {
            return Err(failed(name, &finished));
        }
        result(name, self.output, finished.stdout)
    }
}

fn failed(name: &str, finished: &Finished) -> ToolError {
    let tail = crate::quote::ending(&finished.stderr.0, STDERR_TAIL);
    let status = match finished.status.code() {
        Some(code) => format!("exited with code {code}"),
        None => "was stopped by a signal".to_owned(),
    };
    let message = if tail.is_empty() {
        format!("`{name}` {status}")
    } else {
        format!("`{name}` {status}: {tail}")
    };
    ToolError::execution(message).with_details(json!({
        "exit_code": finished.status.code(),
        "stderr_tail": tail,
    }))
}

fn result(name: &str, kind: OutputKind, (stdout, truncated): (String, bool)) -> ToolResult {
    let parsed = serde_json::from_str::<Value>(&stdout);
    match (kind, parsed) {
        (OutputKind::Text, _) | (OutputKind::Auto, Err(_)) => Ok(Value::String(stdout)),
        (_, Ok(value)) => Ok(value),
        (OutputKind::Json, Err(error)) => Err(ToolError::execution(format!(
            "`{name}` printed no JSON on stdout{} ({error})",
            if truncated {
                " (its output was cut off at the limit)"
            } else {
                ""
            }
        ))),
    }
}

/// The program a command tool starts: a path with a `/` is relative to the tool file's
/// folder; a bare name is looked up on `/usr/local/bin:/usr/bin:/bin` only.
pub(crate) fn resolve_program(program: &str, tool_folder: &Path) -> Result<PathBuf, String> {
    if !program.contains('/') {
        return crate::programs::locate(program).ok_or_else(|| {
            format!("the program `{program}` is not on /usr/local/bin:/usr/bin:/bin; give a path such as `./scripts/{program}`")
        });
    }
    let path = tool_folder.join(program);
    let path = path
        .canonicalize()
        .map_err(|error| format!("the program `{}` cannot be used: {error}", path.display()))?;
    if !path.is_file() {
        return Err(format!("the program `{}` is not a file", path.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = path.metadata().map(|m| m.permissions().mode()).unwrap_or(0);
        if mode & 0o111 == 0 {
            return Err(format!(
                "the program `{}` is not executable (`chmod +x` it)",
                path.display()
            ));
        }
    }
    Ok(path)
}

/// What a script's `#!` line starts (`/bin/sh`; `/usr/bin/env python3` gives `env` and
/// `python3`), which the confinement must let it execute.
fn interpreters(program: &Path) -> Vec<PathBuf> {
    use std::io::Read;
    let mut start = [0u8; 256];
    let read = std::fs::File::open(program)
        .and_then(|mut file| file.read(&mut start))
        .unwrap_or(0);
    let Some(line) = start[..read].strip_prefix(b"#!") else {
        return Vec::new();
    };
    let line = String::from_utf8_lossy(line);
    let mut words = line.lines().next().unwrap_or_default().split_whitespace();
    let Some(first) = words.next() else {
        return Vec::new();
    };
    let mut found = vec![PathBuf::from(first)];
    if first.ends_with("/env")
        && let Some(named) = words.find(|word| !word.starts_with('-'))
        && let Some(located) = crate::programs::locate(named)
    {
        found.push(located);
    }
    found
}
