//! What the MCP tests share: the official Python MCP SDK in a virtual environment set up
//! once per run, and the example server started over HTTP.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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

/// The server binary over HTTP on a free loopback port; killed when dropped.
pub struct HttpServer {
    child: Child,
    /// The MCP endpoint.
    pub url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_http(sandbox: &Path) -> HttpServer {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp_server"))
        .args(["--http", "127.0.0.1:0"])
        .env("MCP_SANDBOX", sandbox)
        .env("MCP_TASKS_DB", sandbox.join("tasks.db"))
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| {
            line.split_once("Streamable HTTP on ")
                .map(|(_, url)| url.trim().to_owned())
        })
        .expect("the server says where it listens");
    // Keep draining its log, so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    HttpServer { child, url }
}
