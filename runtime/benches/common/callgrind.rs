//! Instructions counted by valgrind's callgrind, for the benches that count them (this
//! crate's `call_instructions`, the examples' `http_instructions`, which includes this file).
//! A bench run with `<row> <count>` does that many calls of the row and exits; these
//! functions run it so under callgrind.

use std::path::Path;
use std::process::Command;

/// The row and call count this bench was run with under callgrind (`<row> <count>`), or
/// none when it was run to report (cargo's own `--bench` flag aside).
pub fn counted_run() -> Option<(String, u64)> {
    let arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|argument| !argument.starts_with("--"))
        .collect();
    match arguments.as_slice() {
        [row, count] => Some((row.clone(), count.parse().expect("a call count"))),
        _ => None,
    }
}

/// Marks where a counted run's calls begin, once what they use is built: callgrind drops
/// what it counted before (`--zero-before`), so that start-up work whose length varies
/// from run to run (a clock's calibration, which times itself) is not counted at all.
#[inline(never)]
pub fn counting_starts() {
    std::hint::black_box(());
}

/// Instructions per call of `row`: `program` run for `2 × calls` and for `calls` calls, the
/// difference over `calls` (start-up, the runtime and what is built once cancel out).
pub fn per_call(program: &Path, row: &str, calls: u64) -> u64 {
    let once = counted(program, row, calls);
    let twice = counted(program, row, 2 * calls);
    twice.saturating_sub(once) / calls
}

/// Instructions callgrind counted for `count` calls of `row`, start-up included.
fn counted(program: &Path, row: &str, count: u64) -> u64 {
    let output = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            "--zero-before=*counting_starts*",
        ])
        .arg(program)
        .args([row, &count.to_string()])
        .output()
        .expect("valgrind is installed (apt-get install valgrind)");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{row} failed under callgrind:\n{log}"
    );
    log.lines()
        .find_map(|line| line.split("Collected : ").nth(1))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or_else(|| panic!("callgrind reported no count for {row}:\n{log}"))
}
