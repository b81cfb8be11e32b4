//! A real OpenID provider on 127.0.0.1: panva's `oidc-provider` (npm, OpenID-certified),
//! installed with npm once per test run, started with tests/oidc/provider.mjs and the
//! clients, users and audiences a test chooses (see that script). Killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The provider's version the tests are written against.
pub const OIDC_PROVIDER: &str = "oidc-provider@9.13.3";

/// A running provider.
pub struct OidcProvider {
    child: Child,
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub issuer: String,
}

impl OidcProvider {
    /// Starts a provider with `settings` (JSON, as tests/oidc/provider.mjs reads them),
    /// installing it under `folder` (a test's `CARGO_TARGET_TMPDIR`) the first time.
    pub fn start(folder: &Path, settings: &str) -> OidcProvider {
        let script = installed(&folder.join("oidc-provider"));
        let mut child = Command::new("node")
            .arg(script)
            .arg(settings)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts the provider (Node.js is needed: apt-get install nodejs npm)");
        let stdout = child.stdout.take().expect("the provider's stdout");
        let mut lines = BufReader::new(stdout).lines();
        let issuer = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(issuer) = line.strip_prefix("issuer ") {
                        break issuer.trim().to_owned();
                    }
                }
                _ => {
                    let _ = child.kill();
                    panic!(
                        "the OpenID provider exited before it listened (see tests/oidc/provider.mjs)"
                    );
                }
            }
        };
        // The script prints nothing more; its pipe is drained so it never blocks.
        std::thread::spawn(move || for _ in lines {});
        OidcProvider { child, issuer }
    }

    /// Stops the provider now (as a provider that went down).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The script, beside an installed `oidc-provider` (an ES module finds its packages from
/// its own folder).
fn installed(folder: &Path) -> PathBuf {
    static SCRIPT: OnceLock<PathBuf> = OnceLock::new();
    SCRIPT
        .get_or_init(|| {
            let marker = folder.join(format!("installed-{OIDC_PROVIDER}"));
            if !marker.exists() {
                std::fs::create_dir_all(folder).expect("the folder is made");
                std::fs::write(
                    folder.join("package.json"),
                    "{\"private\": true, \"type\": \"module\"}",
                )
                .expect("written");
                let installed = Command::new("npm")
                    .args([
                        "install",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                        OIDC_PROVIDER,
                    ])
                    .current_dir(folder)
                    .status()
                    .expect("npm runs (apt-get install nodejs npm)");
                assert!(installed.success(), "npm install {OIDC_PROVIDER} failed");
                std::fs::write(&marker, "").expect("the marker is written");
            }
            let script = folder.join("provider.mjs");
            let source = concat!(env!("CARGO_MANIFEST_DIR"), "/../oidc/provider.mjs");
            std::fs::copy(source, &script).expect("the provider's script is copied");
            script
        })
        .clone()
}
