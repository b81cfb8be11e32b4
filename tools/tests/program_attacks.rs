//! Allowlisted programs with real `git` and `find`: flags and config that would make them a
//! shell are refused before they start, a repository's own config cannot name a program to
//! run, the environment is scrubbed, approvers see the exact command, and (where the kernel
//! has Landlock) the program cannot write outside the sandbox even through an argument the
//! policy allows.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate_tools::files::{self, Sandbox};
use toolgate_tools::programs::{self, ArgKind, CommandConfig, ProgramPolicy};

struct Lab {
    registry: Registry,
    sandbox: TempDir,
    outside: TempDir,
}

impl Lab {
    fn marker(&self) -> PathBuf {
        self.outside.path().join("pwned")
    }

    fn outside(&self) -> String {
        self.outside.path().display().to_string()
    }

    async fn run(&self, program: &str, args: &[&str], cwd: &str) -> Result<Value, ToolError> {
        let arguments = json!({"program": program, "args": args, "cwd": cwd});
        self.registry
            .call(
                &Caller::new("agent", "user"),
                ToolCall::new("1", "run_command", arguments),
            )
            .await
            .result
    }
}

fn git(folder: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(folder)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git is installed (.ci/run installs it)");
    assert!(status.success(), "git {args:?}");
}

fn lab(mode: PolicyMode) -> Lab {
    lab_with(mode, true)
}

fn lab_with(mode: PolicyMode, confine: bool) -> Lab {
    let sandbox = TempDir::new().unwrap();
    let outside = TempDir::new().unwrap();
    let repo = sandbox.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("notes.txt"), "first\n").unwrap();
    git(&repo, &["add", "notes.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    std::fs::write(outside.path().join("keep.txt"), "outside").unwrap();
    let mut config = CommandConfig::new()
        .program("git", ProgramPolicy::git_read_only())
        .program("find", ProgramPolicy::find())
        .program("ls", ProgramPolicy::ls())
        .program("env", ProgramPolicy::new())
        .program("touch", ProgramPolicy::new().positionals(ArgKind::Text))
        .program(
            "sort",
            ProgramPolicy::new()
                .flags(["-S*"])
                .positionals(ArgKind::Path),
        );
    config.confine = confine;
    let mut builder = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .policy_mode(mode)
        .state(config)
        .state(Sandbox::new(sandbox.path()).unwrap())
        .tool(programs::run_command_tool().permission("user"));
    for tool in files::tools() {
        builder = builder.tool(tool.permission("user"));
    }
    Lab {
        registry: builder.build().unwrap(),
        sandbox,
        outside,
    }
}

#[tokio::test]
async fn flags_that_run_code_or_reach_outside_are_refused_before_the_program_starts() {
    let lab = lab(PolicyMode::Auto);
    let marker = lab.marker().display().to_string();
    let outside = lab.outside();
    let sandbox_dir = lab.sandbox.path().display().to_string();
    let alias = format!("alias.x=!touch {marker}");
    let fsmonitor = format!("core.fsmonitor=touch {marker}");
    let output = format!("--output={outside}/diff");
    let exec_path = format!("--exec-path={sandbox_dir}");
    let fprint_target = format!("{outside}/list");
    let attacks: Vec<(&str, Vec<&str>)> = vec![
        ("git", vec!["-c", &alias, "x"]),
        ("git", vec!["-c", &fsmonitor, "status"]),
        ("git", vec!["-C", &outside, "init"]),
        (
            "git",
            vec!["diff", "--no-index", &output, "notes.txt", "notes.txt"],
        ),
        ("git", vec!["diff", &output]),
        ("git", vec![&exec_path, "x"]),
        ("git", vec!["--git-dir=/tmp", "status"]),
        ("git", vec!["status", "--", &outside]),
        ("git", vec!["log", "../.."]),
        ("git", vec!["config", "core.fsmonitor", "touch x"]),
        ("git", vec!["grep", "-O", "x"]),
        ("git", vec!["log", "-n", "$(touch x)"]),
        ("find", vec![".", "-exec", "touch", &marker, ";"]),
        ("find", vec![".", "-execdir", "touch", &marker, ";"]),
        ("find", vec![".", "-ok", "touch", &marker, ";"]),
        ("find", vec![&outside, "-delete"]),
        ("find", vec![".", "-delete"]),
        ("find", vec![".", "-fprint", &fprint_target]),
        ("find", vec![".", "-fls", &fprint_target]),
        ("find", vec!["-L", "."]),
        ("find", vec![".", "-newer", &outside]),
        ("ls", vec![&outside]),
        ("ls", vec!["--hyperlink=x"]),
    ];
    for (program, args) in attacks {
        let refused = lab.run(program, &args, "repo").await.unwrap_err();
        assert_eq!(
            refused.code.as_str(),
            "argument_not_allowed",
            "{program} {args:?}: {refused:?}"
        );
    }
    for program in ["sh", "bash", "/usr/bin/git", "python3", "git ", "../git"] {
        let refused = lab.run(program, &["status"], "repo").await.unwrap_err();
        assert_eq!(refused.code.as_str(), "program_not_allowed", "{program}");
    }
    assert!(!lab.marker().exists(), "no command ran");
    let outside_entries: Vec<_> = std::fs::read_dir(lab.outside.path()).unwrap().collect();
    assert_eq!(outside_entries.len(), 1, "nothing was written outside");
    assert!(lab.outside.path().join("keep.txt").exists());
}

#[tokio::test]
async fn ordinary_use_still_works() {
    let lab = lab(PolicyMode::Auto);
    let status = lab
        .run("git", &["status", "--short"], "repo")
        .await
        .unwrap();
    assert_eq!(status["exit_code"], 0, "{status}");
    let log = lab
        .run("git", &["log", "--oneline", "-n", "1"], "repo")
        .await
        .unwrap();
    assert!(log["stdout"].as_str().unwrap().contains("first"), "{log}");
    let diff = lab
        .run(
            "git",
            &["diff", "--stat", "HEAD", "--", "notes.txt"],
            "repo",
        )
        .await
        .unwrap();
    assert_eq!(diff["exit_code"], 0, "{diff}");
    let found = lab
        .run("find", &[".", "-name", "*.txt", "-type", "f"], "repo")
        .await
        .unwrap();
    assert_eq!(found["stdout"], "./notes.txt\n", "{found}");
    let listed = lab.run("ls", &["-la", "."], "repo").await.unwrap();
    assert!(listed["stdout"].as_str().unwrap().contains("notes.txt"));
    // A program that spills to its temporary folder works confined (sort with a 1 KiB buffer
    // writes temporary files for a larger input).
    let lines: String = (0..5000).rev().map(|n| format!("{n:05}\n")).collect();
    std::fs::write(lab.sandbox.path().join("repo/numbers.txt"), lines).unwrap();
    let sorted = lab
        .run("sort", &["-S1K", "numbers.txt"], "repo")
        .await
        .unwrap();
    assert_eq!(sorted["exit_code"], 0, "{sorted}");
    assert!(
        sorted["stdout"]
            .as_str()
            .unwrap()
            .starts_with("00000\n00001\n")
    );
}

#[tokio::test]
async fn a_repository_cannot_make_git_run_a_program() {
    // Unconfined too: git's own overrides must hold where the kernel has no Landlock.
    for confine in [false, true] {
        a_repository_cannot_make_git_run_a_program_when(confine).await;
    }
}

async fn a_repository_cannot_make_git_run_a_program_when(confine: bool) {
    let lab = lab_with(PolicyMode::Auto, confine);
    // The file tools may not write git's config or hooks.
    for path in [
        "repo/.git/config",
        "repo/.git/hooks/pre-commit",
        "repo/.GIT/config",
    ] {
        let refused = lab
            .registry
            .call(
                &Caller::new("agent", "user"),
                ToolCall::new(
                    "w",
                    "write_file",
                    json!({"path": path, "content": "[core]\n"}),
                ),
            )
            .await;
        assert_eq!(
            refused.error().unwrap().code.as_str(),
            "path_not_allowed",
            "{path}"
        );
    }
    // A repository that arrived with a hostile config (cloned, say) runs nothing either.
    let marker = lab.marker().display().to_string();
    let config = lab.sandbox.path().join("repo/.git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[core]\n\tfsmonitor = touch {marker}\n\tpager = touch {marker}\n\thooksPath = hooks\n[diff]\n\texternal = touch {marker}\n"
    ));
    std::fs::write(&config, text).unwrap();
    std::fs::write(lab.sandbox.path().join("repo/notes.txt"), "changed\n").unwrap();
    for args in [
        vec!["status"],
        vec!["diff"],
        vec!["log", "-p"],
        vec!["show"],
    ] {
        let ran = lab.run("git", &args, "repo").await.unwrap();
        assert_eq!(ran["exit_code"], 0, "{args:?}: {ran}");
    }
    assert!(
        !lab.marker().exists(),
        "the repository's config ran nothing"
    );
}

#[tokio::test]
async fn programs_start_with_a_scrubbed_environment() {
    let lab = lab(PolicyMode::Auto);
    let shown = lab.run("env", &[], ".").await.unwrap();
    let mut names: Vec<&str> = shown["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|line| line.split('=').next())
        .collect();
    names.sort();
    assert_eq!(names, ["HOME", "LANG", "PATH", "TMPDIR"], "{shown}");
    // The private temporary folder is gone after the run.
    let tmpdir = shown["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("TMPDIR="))
        .unwrap();
    assert!(!std::path::Path::new(tmpdir).exists(), "{tmpdir}");
}

#[tokio::test]
async fn an_approver_sees_the_exact_command_and_a_refused_one_is_never_shown() {
    let lab = lab(PolicyMode::Prompt);
    let waiting = lab
        .registry
        .call(
            &Caller::new("agent", "user"),
            ToolCall::new(
                "1",
                "run_command",
                json!({"program": "git", "args": ["log", "--format=%h %s", "-n", "3"], "cwd": "repo"}),
            ),
        )
        .await;
    assert_eq!(waiting.error().unwrap().code, ErrorCode::ApprovalRequired);
    let pending = lab
        .registry
        .pending_approvals(&Caller::new("root", "user"))
        .await
        .unwrap();
    let review = pending[0].review.as_ref().unwrap();
    assert_eq!(
        review["command_line"],
        "git log --no-ext-diff --no-textconv '--format=%h %s' -n 3"
    );
    assert_eq!(review["working_folder"], "repo");
    assert_eq!(
        review["allowed_by_policy"],
        json!([
            "subcommand `log`",
            "flag `--format=%h %s`",
            "flag `-n` with number `3`"
        ])
    );
    let refused = lab
        .registry
        .call(
            &Caller::new("agent", "user"),
            ToolCall::new(
                "2",
                "run_command",
                json!({"program": "git", "args": ["-c", "core.fsmonitor=x", "status"]}),
            ),
        )
        .await;
    assert_eq!(
        refused.error().unwrap().code.as_str(),
        "argument_not_allowed"
    );
    assert_eq!(
        lab.registry
            .pending_approvals(&Caller::new("root", "user"))
            .await
            .unwrap()
            .len(),
        1,
        "no approver is asked about a call that could not run"
    );
}

#[tokio::test]
async fn where_the_kernel_confines_programs_an_allowed_argument_still_cannot_write_outside() {
    let lab = lab(PolicyMode::Auto);
    let target = lab.outside.path().join("landlocked");
    let inside = lab.run("touch", &["inside.txt"], ".").await.unwrap();
    assert_eq!(inside["exit_code"], 0, "{inside}");
    assert!(lab.sandbox.path().join("inside.txt").exists());
    // `touch` takes free text here, so the policy lets an absolute path through: only the
    // confinement stands in the way.
    let ran = lab
        .run("touch", &[target.to_str().unwrap()], ".")
        .await
        .unwrap();
    match ran["confinement"].as_str().unwrap() {
        "landlock" | "landlock-partial" => {
            assert_ne!(ran["exit_code"], 0, "{ran}");
            assert!(!target.exists(), "Landlock kept the write inside");
        }
        "none" => eprintln!("Landlock is not available on this kernel; confinement not tested"),
        other => panic!("unexpected confinement {other}"),
    }
}

#[tokio::test]
async fn a_dry_run_reports_what_the_argument_policy_would_refuse() {
    let lab = lab(PolicyMode::Prompt);
    let agent = Caller::new("agent", "user");
    let dry_run = |args: Vec<&str>| {
        let call = ToolCall::new(
            "d",
            "run_command",
            json!({"program": "git", "args": args, "cwd": "repo"}),
        );
        let options = CallOptions {
            dry_run: true,
            ..CallOptions::default()
        };
        lab.registry.call_with(&agent, call, options)
    };
    let refused = dry_run(vec!["-c", "core.fsmonitor=x", "status"]).await;
    assert_eq!(
        refused.error().unwrap().code.as_str(),
        "argument_not_allowed"
    );
    let allowed = dry_run(vec!["status"]).await;
    assert_eq!(allowed.result.unwrap()["decision"], "require_approval");
}
