//! What a program may be given: an argument policy per program, deny by default.
//!
//! Allowlisting a program's name is not enough: flags and config make most programs a shell
//! (`git -c alias.x='!cmd' x`, `find -exec`). A [`ProgramPolicy`] lists what is allowed,
//! the subcommands, the flags, which flags take a value and what kind, and what the other
//! arguments are; everything else is refused before the program starts. Path values are
//! checked through the sandbox like any file tool's path.

use std::path::Path;

use cap_std::fs::Dir;
use toolgate::ToolError;

use crate::files::Sandbox;

/// What a value (after a flag, or a positional argument) may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgKind {
    /// A path inside the sandbox, relative to the working folder: checked as text like every
    /// sandbox path, and resolved through the sandbox (a symlink leading out is refused).
    Path,
    /// Free text that does not start with `-` (so it cannot smuggle in a flag).
    Text,
    /// A whole number.
    Number,
}

/// The arguments one program accepts. Build with [`ProgramPolicy::new`], or start from a
/// preset ([`git_read_only`](ProgramPolicy::git_read_only), [`find`](ProgramPolicy::find),
/// [`ls`](ProgramPolicy::ls)).
///
/// ```
/// use toolgate_tools::programs::{ArgKind, ProgramPolicy};
///
/// // `wc -l <files>`, nothing else.
/// let policy = ProgramPolicy::new().flags(["-l", "-w", "-c"]).positionals(ArgKind::Path);
/// # let _ = policy;
/// ```
#[derive(Debug, Clone, Default)]
pub struct ProgramPolicy {
    pub(crate) subcommands: Option<Vec<String>>,
    pub(crate) flags: Vec<String>,
    pub(crate) valued_flags: Vec<(String, ArgKind)>,
    pub(crate) positionals: Option<ArgKind>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) exec_paths: Vec<std::path::PathBuf>,
    /// Arguments always given right after a subcommand (`--no-ext-diff` after `diff`).
    pub(crate) forced: Vec<(String, Vec<String>)>,
}

impl ProgramPolicy {
    /// A policy that allows no arguments at all; add what the program may take.
    pub fn new() -> Self {
        ProgramPolicy::default()
    }

    /// The first argument must be one of these subcommands.
    pub fn subcommands<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.subcommands = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Flags allowed on their own. A pattern ending in `*` allows any rest
    /// (`"--format=*"`); anything else must match exactly.
    pub fn flags<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.flags.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// A flag that takes a value, as the next argument or as `flag=value`.
    pub fn flag_with_value(mut self, flag: impl Into<String>, kind: ArgKind) -> Self {
        self.valued_flags.push((flag.into(), kind));
        self
    }

    /// What the arguments that are not flags are (by default none is allowed). After `--`,
    /// every argument is one of these.
    pub fn positionals(mut self, kind: ArgKind) -> Self {
        self.positionals = Some(kind);
        self
    }

    /// Sets an environment variable for this program (the environment is otherwise empty
    /// but for `PATH`, `HOME`, `LANG`).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// A folder of helper programs this program runs itself (git's `git-core`), which the
    /// confinement must let it execute. Nothing else is executable for it.
    pub fn exec_path(mut self, folder: impl Into<std::path::PathBuf>) -> Self {
        self.exec_paths.push(folder.into());
        self
    }

    /// Always gives these arguments right after `subcommand` (before the caller's), e.g.
    /// flags that switch off what a repository's config could make a program run.
    pub fn force_after_subcommand<I, S>(mut self, subcommand: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.forced.push((
            subcommand.into(),
            args.into_iter().map(Into::into).collect(),
        ));
        self
    }

    /// Checks `args` for a program started in `folder`; returns the arguments to start it
    /// with (forced ones added) and a description of what was allowed, for approvers, or
    /// the refusal.
    pub(crate) fn check(
        &self,
        program: &str,
        args: &[String],
        sandbox: &Sandbox,
        folder: &Dir,
    ) -> Result<(Vec<String>, Vec<String>), ToolError> {
        let allowed = self.check_each(program, args, sandbox, folder)?;
        let mut final_args = args.to_vec();
        if let Some(first) = args.first()
            && self.subcommands.is_some()
        {
            let forced = self
                .forced
                .iter()
                .filter(|(subcommand, _)| subcommand == first)
                .flat_map(|(_, forced)| forced.iter().cloned());
            final_args.splice(1..1, forced);
        }
        Ok((final_args, allowed))
    }

    fn check_each(
        &self,
        program: &str,
        args: &[String],
        sandbox: &Sandbox,
        folder: &Dir,
    ) -> Result<Vec<String>, ToolError> {
        let mut allowed = Vec::new();
        let mut rest = args.iter();
        if let Some(subcommands) = &self.subcommands {
            let first = rest.next().map(String::as_str).unwrap_or_default();
            if !subcommands.iter().any(|name| name == first) {
                return Err(refused(
                    program,
                    first,
                    &format!("the subcommand must be one of: {}", subcommands.join(", ")),
                ));
            }
            allowed.push(format!("subcommand `{first}`"));
        }
        let mut only_positionals = false;
        while let Some(arg) = rest.next() {
            if !only_positionals && arg == "--" && self.positionals.is_some() {
                only_positionals = true;
                continue;
            }
            if only_positionals || !arg.starts_with('-') || arg == "-" {
                let kind = self
                    .positionals
                    .ok_or_else(|| refused(program, arg, "it takes no other arguments"))?;
                check_value(program, arg, kind, sandbox, folder)?;
                allowed.push(format!("{} `{arg}`", describe(kind)));
                continue;
            }
            if let Some(kind) = self.valued(arg) {
                let value = rest
                    .next()
                    .ok_or_else(|| refused(program, arg, "the flag needs a value"))?;
                check_value(program, value, kind, sandbox, folder)?;
                allowed.push(format!("flag `{arg}` with {} `{value}`", describe(kind)));
            } else if let Some((flag, value)) = arg.split_once('=')
                && let Some(kind) = self.valued(flag)
            {
                check_value(program, value, kind, sandbox, folder)?;
                allowed.push(format!("flag `{flag}` with {} `{value}`", describe(kind)));
            } else if self.flags.iter().any(|pattern| matches(pattern, arg)) {
                allowed.push(format!("flag `{arg}`"));
            } else {
                return Err(refused(program, arg, "the flag is not on its allowlist"));
            }
        }
        Ok(allowed)
    }

    fn valued(&self, flag: &str) -> Option<ArgKind> {
        self.valued_flags
            .iter()
            .find(|(name, _)| name == flag)
            .map(|(_, kind)| *kind)
    }
}

fn matches(pattern: &str, arg: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => arg.starts_with(prefix),
        None => pattern == arg,
    }
}

fn describe(kind: ArgKind) -> &'static str {
    match kind {
        ArgKind::Path => "path",
        ArgKind::Text => "text",
        ArgKind::Number => "number",
    }
}

fn check_value(
    program: &str,
    value: &str,
    kind: ArgKind,
    sandbox: &Sandbox,
    folder: &Dir,
) -> Result<(), ToolError> {
    match kind {
        ArgKind::Number => value
            .parse::<i64>()
            .map(drop)
            .map_err(|_| refused(program, value, "a whole number is expected")),
        ArgKind::Text if value.starts_with('-') => {
            Err(refused(program, value, "a value may not start with `-`"))
        }
        ArgKind::Text => Ok(()),
        ArgKind::Path => check_path(program, value, sandbox, folder),
    }
}

/// A path argument: the sandbox's text checks, then resolved inside the working folder's
/// handle, so a symlink that leads out is refused (a missing path is judged by its folder).
fn check_path(
    program: &str,
    value: &str,
    sandbox: &Sandbox,
    folder: &Dir,
) -> Result<(), ToolError> {
    sandbox
        .check_path_text(value)
        .map_err(|error| refused(program, value, &error.message))?;
    let mut path = Path::new(value);
    loop {
        match folder.metadata(path) {
            Ok(_) => return Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => path = parent,
                _ => return Ok(()),
            },
            Err(_) => {
                return Err(refused(
                    program,
                    value,
                    "the path leads outside the sandbox",
                ));
            }
        }
    }
}

fn refused(program: &str, arg: &str, why: &str) -> ToolError {
    let arg = crate::quote::beginning(arg);
    ToolError::new(
        "argument_not_allowed",
        format!("`{program}` may not be given `{arg}`: {why}"),
    )
}
