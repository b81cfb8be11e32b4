//! The publishable crates package as a registry would take them: a dry-run publish of the
//! workspace succeeds (siblings resolved together, as `cargo publish --workspace` does), and
//! each package holds its README and both license files, and none of what only this
//! repository needs (benchmarks, proptest regressions).
//!
//! Packages are not compiled again here (`--no-verify`): the suite builds the same sources.
//! The crates.io index must be reachable.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PUBLISHED: [&str; 4] = [
    "toolgate",
    "toolgate-macros",
    "toolgate-tools",
    "toolgate-cli",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `cargo <args>` in the workspace, in a target folder of its own (the suite's is busy).
fn cargo(args: &[&str], target: &Path) -> Output {
    Command::new(env!("CARGO"))
        .args(args)
        .current_dir(workspace())
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn the_workspace_publishes_in_a_dry_run_with_what_a_user_needs() {
    let target = tempfile::tempdir().unwrap();
    let dry_run = [
        "publish",
        "--workspace",
        "--dry-run",
        "--no-verify",
        "--allow-dirty",
    ];
    let published = cargo(&dry_run, target.path());
    let said = text(&published);
    assert!(published.status.success(), "{said}");
    for name in PUBLISHED {
        assert!(
            said.contains(&format!("Uploading {name} v")),
            "{name}: {said}"
        );
    }
    for name in PUBLISHED {
        let listing = ["package", "--list", "--allow-dirty", "-p", name];
        let listed = cargo(&listing, target.path());
        assert!(listed.status.success(), "{}", text(&listed));
        let files = String::from_utf8_lossy(&listed.stdout).into_owned();
        let files: Vec<&str> = files.lines().collect();
        for needed in ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "Cargo.toml"] {
            assert!(files.contains(&needed), "{name} lacks {needed}: {files:?}");
        }
        let stray = files.iter().find(|file| {
            file.starts_with("benches/")
                || file.starts_with("tests/")
                || file.contains("proptest-regressions")
        });
        assert_eq!(
            stray, None,
            "{name} packages what only this repository needs"
        );
    }
}
