//! Safe policies for common programs, so that the safe configuration is the easy one.

use std::path::PathBuf;
use std::process::Command;

use super::policy::{ArgKind, ProgramPolicy};

/// Configuration git takes from the command line's level (the highest), so that whatever a
/// repository's own `.git/config` says, git runs no hook, no fsmonitor, no pager, no
/// external diff, no credential helper or signature program, and reaches no remote.
const GIT_OVERRIDES: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
    ("sequence.editor", "false"),
    ("uploadpack.packObjectsHook", ""),
];

impl ProgramPolicy {
    /// git, reading only: `status`, `log`, `diff`, `show`, `ls-files`, `blame`, `rev-parse`,
    /// `describe`, `shortlog` with common display flags; revisions and paths as arguments.
    /// No global flags (`-c`, `-C`, `--exec-path`, `--git-dir`), no writing flags
    /// (`--output`), no `--no-index`. No system or global config is read, and the repository's
    /// own config cannot name a program to run (see the overrides in the source).
    pub fn git_read_only() -> Self {
        let mut policy = ProgramPolicy::new()
            .subcommands([
                "status",
                "log",
                "diff",
                "show",
                "ls-files",
                "blame",
                "rev-parse",
                "describe",
                "shortlog",
            ])
            .flags([
                "--oneline",
                "--stat",
                "--shortstat",
                "--numstat",
                "--name-only",
                "--name-status",
                "--short",
                "-s",
                "--porcelain",
                "--porcelain=v1",
                "--porcelain=v2",
                "-b",
                "--branch",
                "--no-color",
                "--color=never",
                "--graph",
                "--decorate",
                "--all",
                "--reverse",
                "-p",
                "--patch",
                "--cached",
                "--staged",
                "--abbrev-commit",
                "-w",
                "--ignore-all-space",
                "--format=*",
                "--pretty=*",
                "--since=*",
                "--until=*",
                "--author=*",
                "--grep=*",
                "-i",
                "--first-parent",
                "--no-merges",
                "--merges",
                "--abbrev-ref",
                "--show-toplevel",
                "--tags",
                "--long",
                "--summary",
                "--no-textconv",
                "--no-ext-diff",
            ])
            .flag_with_value("-n", ArgKind::Number)
            .flag_with_value("--max-count", ArgKind::Number)
            .flag_with_value("--skip", ArgKind::Number)
            .flag_with_value("--unified", ArgKind::Number)
            .positionals(ArgKind::Path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_CONFIG_COUNT", GIT_OVERRIDES.len().to_string());
        // A repository's config may name an external diff or a text converter; these flags
        // make git ignore both, so a diff never runs a program.
        for subcommand in ["diff", "log", "show"] {
            policy = policy.force_after_subcommand(subcommand, ["--no-ext-diff", "--no-textconv"]);
        }
        policy = policy.force_after_subcommand("blame", ["--no-textconv"]);
        for (index, (key, value)) in GIT_OVERRIDES.iter().enumerate() {
            policy = policy
                .env(format!("GIT_CONFIG_KEY_{index}"), *key)
                .env(format!("GIT_CONFIG_VALUE_{index}"), *value);
        }
        match git_exec_path() {
            Some(folder) => policy.exec_path(folder),
            None => policy,
        }
    }

    /// find, searching only: start folders inside the sandbox and tests (`-name`, `-type`,
    /// `-maxdepth`, `-size`, `-newer`, ...) with `-print`. No `-exec`, `-execdir`, `-ok`,
    /// `-delete`, `-fprint*`, `-fls`, no following symlinks (`-L`).
    pub fn find() -> Self {
        ProgramPolicy::new()
            .flags([
                "-print",
                "-print0",
                "-depth",
                "-empty",
                "-o",
                "-or",
                "-a",
                "-and",
                "-not",
                "-prune",
                "-readable",
                "-true",
                "-false",
            ])
            .flag_with_value("-name", ArgKind::Text)
            .flag_with_value("-iname", ArgKind::Text)
            .flag_with_value("-path", ArgKind::Text)
            .flag_with_value("-ipath", ArgKind::Text)
            .flag_with_value("-regex", ArgKind::Text)
            .flag_with_value("-type", ArgKind::Text)
            .flag_with_value("-size", ArgKind::Text)
            .flag_with_value("-mtime", ArgKind::Text)
            .flag_with_value("-mmin", ArgKind::Text)
            .flag_with_value("-perm", ArgKind::Text)
            .flag_with_value("-maxdepth", ArgKind::Number)
            .flag_with_value("-mindepth", ArgKind::Number)
            .flag_with_value("-newer", ArgKind::Path)
            .positionals(ArgKind::Path)
    }

    /// ls: listing flags and paths inside the sandbox.
    pub fn ls() -> Self {
        ProgramPolicy::new()
            .flags([
                "-l",
                "-a",
                "-A",
                "-la",
                "-al",
                "-lh",
                "-lah",
                "-1",
                "-R",
                "-h",
                "-S",
                "-t",
                "-r",
                "-F",
                "--color=never",
            ])
            .positionals(ArgKind::Path)
    }
}

/// Where git keeps its helper programs (`git --exec-path`), asked of git itself.
fn git_exec_path() -> Option<PathBuf> {
    let output = Command::new("git")
        .arg("--exec-path")
        .env_clear()
        .env("PATH", super::SAFE_PATH)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let folder = PathBuf::from(text.trim());
    folder.is_dir().then_some(folder)
}
