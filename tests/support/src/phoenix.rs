//! Arize Phoenix on 127.0.0.1: an OpenTelemetry backend that takes OTLP (HTTP and gRPC) and
//! gives the spans back through its REST API. Installed from PyPI into a virtual environment
//! once per machine (tests/phoenix/setup.sh, which CI starts early), run with a working
//! folder of its own, killed when dropped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long Phoenix may take to listen (it migrates its database first).
const START_TIMEOUT: Duration = Duration::from_secs(180);

/// A running Phoenix.
pub struct Phoenix {
    child: Child,
    folder: TempDir,
    /// Its web UI and REST API (and OTLP over HTTP at `/v1/traces`): `http://127.0.0.1:PORT`.
    pub url: String,
    /// Its OTLP gRPC receiver: `http://127.0.0.1:PORT`.
    pub grpc: String,
}

impl Phoenix {
    /// Starts Phoenix, installing it under `folder` (a test's `CARGO_TARGET_TMPDIR`) first
    /// if CI has not.
    pub fn start(folder: &Path) -> Phoenix {
        let venv = installed(folder);
        let work = tempfile::Builder::new()
            .prefix("toolgate-phoenix-")
            .tempdir()
            .expect("a temporary folder");
        let (http, grpc) = (free_port(), free_port());
        let log = std::fs::File::create(work.path().join("phoenix.log")).expect("a log file");
        let child = Command::new(venv.join("bin/phoenix"))
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", work.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", http.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("DO_NOT_TRACK", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log, twice"))
            .stderr(log)
            .spawn()
            .expect("phoenix starts");
        let mut phoenix = Phoenix {
            child,
            folder: work,
            url: format!("http://127.0.0.1:{http}"),
            grpc: format!("http://127.0.0.1:{grpc}"),
        };
        phoenix.wait_until_listening(http);
        phoenix
    }

    fn wait_until_listening(&mut self, port: u16) {
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "Phoenix exited ({status}) before it listened:\n{}",
                    self.log()
                );
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "Phoenix did not listen within {START_TIMEOUT:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// What Phoenix wrote so far (for a failing test's message).
    pub fn log(&self) -> String {
        let text =
            std::fs::read_to_string(self.folder.path().join("phoenix.log")).unwrap_or_default();
        let mut tail = text.len().saturating_sub(4000);
        while !text.is_char_boundary(tail) {
            tail += 1;
        }
        text[tail..].to_owned()
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The virtual environment with Phoenix, installed by tests/phoenix/setup.sh (which takes a
/// lock: a test that starts while CI installs it waits).
fn installed(folder: &Path) -> PathBuf {
    let venv = folder.join("phoenix");
    let output = crate::setup::run("phoenix", &venv);
    assert!(
        output.status.success(),
        "tests/phoenix/setup.sh failed (pip install arize-phoenix):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    venv
}

/// A free port below the range the system hands out for port 0. Phoenix's gRPC server
/// binds with `SO_REUSEPORT`: on a port taken from that range and freed again, it could
/// share the port with a server of another test that was given it meanwhile, and take its
/// connections.
fn free_port() -> u16 {
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let (low, high) = (10_000u16, ephemeral.max(10_001));
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|time| time.subsec_nanos())
        .unwrap_or_default()
        ^ std::process::id();
    for attempt in 0..1000u32 {
        let spread = seed.wrapping_add(attempt.wrapping_mul(2_654_435_761)) % u32::from(high - low);
        let port = low + spread as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port below {high}");
}
