//! The command as a Python wheel: the binary the tests built, packed as maturin packs it,
//! installed with pip into a fresh virtual environment; `toolgate` from there answers
//! `--help` and runs `init` and a call in an empty folder.

use std::path::Path;
use std::process::Command;

use crate::support::Project;

fn run(program: impl AsRef<std::ffi::OsStr>, args: &[&str], folder: &Path) -> String {
    let output = Command::new(program)
        .args(args)
        .current_dir(folder)
        .env("NO_COLOR", "1")
        .output()
        .expect("it starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{args:?} failed: {text}");
    text
}

#[test]
fn the_wheel_installs_a_working_command() {
    let scratch = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/wheel_from_binary.py");
    let binary = env!("CARGO_BIN_EXE_toolgate");
    let version = env!("CARGO_PKG_VERSION");
    let out = scratch.path().join("dist");
    let made = run(
        "python3",
        &[
            script.to_str().unwrap(),
            binary,
            version,
            out.to_str().unwrap(),
        ],
        scratch.path(),
    );
    let wheel = made.trim();
    assert!(wheel.ends_with(".whl"), "{made}");

    let venv = scratch.path().join("venv");
    run(
        "python3",
        &["-m", "venv", venv.to_str().unwrap()],
        scratch.path(),
    );
    let pip = venv.join("bin/pip");
    run(
        &pip,
        &["install", "--no-index", "--quiet", wheel],
        scratch.path(),
    );
    let toolgate = venv.join("bin/toolgate");
    assert!(
        run(&toolgate, &["--help"], scratch.path()).contains("Tools a language model can call")
    );
    assert!(run(&toolgate, &["--version"], scratch.path()).contains(version));

    let project = Project::empty();
    run(&toolgate, &["init"], project.path());
    let called = run(
        &toolgate,
        &["call", "greet", "--text", "from the wheel"],
        project.path(),
    );
    assert!(called.contains("from the wheel"), "{called}");
}
