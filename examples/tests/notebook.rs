//! The notebook example: an assistant's calls edit cells held in application state, code
//! cells run, a deletion waits for a person (answered here through stdin: first no, then
//! yes), and each call's events are shown as they happen, in order.

use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn calls_are_shown_requested_confirmed_and_executed() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_notebook"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    child.stdin.take().unwrap().write_all(b"n\ny\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let position = |text: &str, after: usize| {
        out[after..]
            .find(text)
            .map(|at| at + after)
            .unwrap_or_else(|| panic!("`{text}` after byte {after} in:\n{out}"))
    };
    let executed = position("= execute_cell executed", 0);
    assert!(
        out[executed..]
            .lines()
            .next()
            .unwrap()
            .ends_with(r#"{"id":2,"output":null}"#),
        "{out}"
    );
    let total = position(r#"{"id":3,"output":50.0}"#, executed);
    let with_tax = position(r#"{"id":3,"output":60.0}"#, total);
    let asked = position(
        r#"→ delete_cell requested {"id":1} (needs confirmation)"#,
        with_tax,
    );
    let denied = position("delete_cell approval_denied by", asked);
    let refused = position("✗ delete_cell: approval_denied", denied);
    let approved = position("delete_cell approved by", refused);
    let deleted = position(r#"= delete_cell executed"#, approved);
    let notebook = position("notebook: ", deleted);
    let context: serde_json::Value =
        serde_json::from_str(out[notebook + "notebook: ".len()..].trim()).unwrap();
    let ids: Vec<u64> = context["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cell| cell["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        [3, 2],
        "cell 3 moved to the top, cell 1 deleted once confirmed"
    );
    assert_eq!(context["variables"]["price"], 12.5);
    assert_eq!(context["variables"]["count"], 4);
}
