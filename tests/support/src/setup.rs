//! The setup scripts of tests/*/setup.sh, which install what a real part needs once per
//! machine (CI starts them early; each takes a lock, so a test that comes first waits).

use std::path::Path;
use std::process::{Command, Output};

/// Runs tests/`part`/setup.sh with `target` (where it installs) and returns what it said.
pub(crate) fn run(part: &str, target: &Path) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(part)
        .join("setup.sh");
    Command::new("bash")
        .arg(&script)
        .arg(target)
        .output()
        .unwrap_or_else(|error| panic!("bash runs {}: {error}", script.display()))
}
