//! The terminal approver, driven through its standard input like a person would.

use std::io::Write;
use std::process::{Command, Stdio};

fn run_with_answers(answers: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_approve_in_terminal"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answers.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn yes_then_no_then_no_answer() {
    let output = run_with_answers("y\nn\n");
    assert!(
        output.contains("assistant wants to run `delete_file`"),
        "{output}"
    );
    assert!(
        output.contains("2 delete_file: \"deleted docs/notes.txt\""),
        "{output}"
    );
    assert!(
        output.contains(
            "3 delete_file: a person refused this call: the user said no (approval_denied)"
        ),
        "{output}"
    );
    assert!(
        output.contains(
            "4 delete_file: a person refused this call: no one answered (approval_denied)"
        ),
        "{output}"
    );
    assert!(
        output.contains("1 list_files: [\"docs/notes.txt\",\"docs/report.pdf\"]"),
        "{output}"
    );
}

#[test]
fn always_is_asked_once() {
    let output = run_with_answers("always\n");
    assert_eq!(output.matches("Allow? [y/N/always]").count(), 1, "{output}");
    assert!(
        output.contains("3 delete_file: \"deleted docs/report.pdf\""),
        "{output}"
    );
    assert!(
        output.contains("4 delete_file: \"deleted docs/old.txt\""),
        "{output}"
    );
}
