//! The official Python MCP SDK in a virtual environment, set up once per test run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The SDK version the tests are written against.
pub const MCP_SDK: &str = "mcp==2.3.0";

/// The Python of a virtual environment with the SDK, made under `folder` (a test's
/// `CARGO_TARGET_TMPDIR`) the first time and reused after.
pub fn python_with_mcp_sdk(folder: &Path) -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = folder.join("mcp-python-sdk");
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
            std::fs::write(&marker, "").expect("the marker is written");
        }
        python
    })
}
