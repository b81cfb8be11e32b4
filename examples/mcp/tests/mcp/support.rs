//! What the MCP tests share: the official Python MCP SDK in a virtual environment set up
//! once per run, and the example server started over HTTP.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A virtual environment with the Python SDK, made once per test run.
pub fn python() -> &'static Path {
    toolgate_test_support::python_with_mcp_sdk(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// A Python script of `tests/mcp`.
pub fn script(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(name)
}

/// Runs a Python client script of `tests/mcp` with the SDK and returns the JSON report it
/// prints last (the example server it may start gets `MCP_SANDBOX` and `MCP_TASKS_DB` in
/// `sandbox`).
pub fn run_script(name: &str, args: &[&str], sandbox: &Path) -> serde_json::Value {
    let output = Command::new(python())
        .arg(script(name))
        .args(args)
        .env("MCP_SANDBOX", sandbox)
        .env("MCP_TASKS_DB", sandbox.join("tasks.db"))
        .output()
        .expect("the Python client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .expect("the client prints a JSON report")
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

/// The conformance example (the suite's fixture tools) on a free loopback port, once it
/// answers; killed when dropped. Returns it and its MCP endpoint.
pub fn start_fixtures() -> (Fixtures, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let address = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_mcp_conformance"))
        .arg(&address)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the conformance example starts");
    let fixtures = Fixtures(child);
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(&address).is_err() {
        let waited = started.elapsed();
        assert!(
            waited < std::time::Duration::from_secs(30),
            "the example did not listen"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (fixtures, format!("http://{address}/mcp"))
}

/// The running conformance example.
pub struct Fixtures(Child);

impl Drop for Fixtures {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
