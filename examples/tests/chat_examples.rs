//! The chat example's `--examples`: the exchanges in the file come before the conversation
//! in what the model is sent; a file that is not a list of examples is refused with its line.
//! Its slash commands (the table `toolgate chat` uses too) are answered without the model.

use std::io::Write;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::Json;
use serde_json::{Value, json};

/// An OpenAI-compatible server that answers "Hi." and keeps what it was sent.
async fn recording_model() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |Json(request): Json<Value>| {
            kept.lock().unwrap().push(request);
            async {
                Json(json!({"choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Hi."}}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

fn chat(base: &str, folder: &std::path::Path, examples: &std::path::Path) -> std::process::Output {
    let examples = [std::ffi::OsStr::new("--examples"), examples.as_os_str()];
    chat_with(base, folder, &examples, "When are you open?\n/quit\n")
}

fn chat_with(
    base: &str,
    folder: &std::path::Path,
    args: &[&std::ffi::OsStr],
    typed: &str,
) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chat"))
        .args(["--base-url", base, "--database"])
        .arg(folder.join("clinic.db"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the chat example starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_examples_come_before_the_conversation() {
    let (base, seen) = recording_model().await;
    let folder = tempfile::tempdir().unwrap();
    let examples = folder.path().join("examples.json");
    let written = json!([{
        "user": "Are you open on Sunday?",
        "calls": [{"tool": "get_clinic_hours", "arguments": {}, "result": "Mon-Sat 8-18"}],
        "answer": "No, we are open Monday to Saturday, 8 to 18."
    }]);
    std::fs::write(&examples, written.to_string()).unwrap();
    let output = tokio::task::block_in_place(|| chat(&base, folder.path(), &examples));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = seen.lock().unwrap();
    let messages = requests[0]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(messages[1]["content"], "Are you open on Sunday?");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        "get_clinic_hours"
    );
    assert_eq!(messages[5]["content"], "When are you open?");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_is_not_a_list_of_examples_is_refused_with_its_line() {
    let folder = tempfile::tempdir().unwrap();
    let examples = folder.path().join("examples.json");
    std::fs::write(
        &examples,
        "[\n  {\"user\": \"hi\", \"reply\": \"hello\"}\n]",
    )
    .unwrap();
    let output =
        tokio::task::block_in_place(|| chat("http://127.0.0.1:9/v1", folder.path(), &examples));
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("--examples") && said.contains("line 2") && said.contains("reply"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_commands_are_answered_without_the_model() {
    let (base, seen) = recording_model().await;
    let folder = tempfile::tempdir().unwrap();
    let typed = "/help\n/tools\n/tools permissions\n/tools search opening hours\n\
                 /tool get_clinic_hours --day saturday\n/mcp status\n/nope\n/quit\n";
    let output = tokio::task::block_in_place(|| chat_with(&base, folder.path(), &[], typed));
    let out = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "/tools search WORDS",
        "get_clinic_hours",
        "you are terminal-user (role customer)",
        "\"day\": \"saturday\"",
        "no MCP servers are imported here",
        "unknown command `/nope`: /help lists the commands",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    assert!(seen.lock().unwrap().is_empty(), "nothing went to the model");
}
