//! The official Python MCP SDK in a virtual environment the tests set up, once per run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The SDK version the tests are written against.
const MCP_SDK: &str = "mcp==2.3.0";

/// A virtual environment with the Python SDK, made once per test run.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-python-sdk");
        let python = venv.join("bin/python");
        let marker = venv.join(format!("installed-{MCP_SDK}"));
        if !marker.exists() {
            let created = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .expect("python3 runs");
            assert!(created.success(), "python3 -m venv failed");
            let installed = Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    MCP_SDK,
                ])
                .status()
                .expect("pip runs");
            assert!(installed.success(), "pip install {MCP_SDK} failed");
            std::fs::write(&marker, "").unwrap();
        }
        python
    })
}
