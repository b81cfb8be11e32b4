//! `toolgate chat`: the model's tool calls go through the registry (roles, approval on the
//! terminal), the answer is printed; against a scripted model server for the exact turns,
//! and against a real small model (llama.cpp) for a real conversation.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use toolgate_test_support::LlamaServer;

use crate::support::{BASE, Project};

/// An OpenAI Chat Completions server that answers from a script, one reply per request,
/// and keeps the requests.
async fn scripted(replies: Vec<Value>) -> (String, Arc<Mutex<Vec<Value>>>) {
    type Shared = (Arc<Mutex<Vec<Value>>>, Arc<Mutex<Vec<Value>>>);
    async fn complete(
        State((replies, seen)): State<Shared>,
        Json(request): Json<Value>,
    ) -> Json<Value> {
        seen.lock().unwrap().push(request);
        let message = replies.lock().unwrap().remove(0);
        let finish = if message.get("tool_calls").is_some() {
            "tool_calls"
        } else {
            "stop"
        };
        Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }))
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let state: Shared = (Arc::new(Mutex::new(replies)), Arc::clone(&seen));
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/v1"), seen)
}

fn tool_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}
    ]})
}

fn project(url: &str) -> Project {
    let project = Project::new(&format!(
        "{BASE}\n[model]\nurl = \"{url}\"\nname = \"scripted\"\n"
    ));
    project.write(
        ".toolgate/tools/note.md",
        "---\nname: note\ndescription: Keep a note.\npermission: public\nparameters: {text: string}\ncommand: {program: ./scripts/note.sh}\n---\n",
    );
    project.script(
        ".toolgate/tools/scripts/note.sh",
        "#!/bin/sh\nread -r args\necho \"$args\" >> notes.log\necho '{\"kept\": true}'\n",
    );
    project.write(
        ".toolgate/tools/burn.md",
        "---\nname: burn\ndescription: Burn the notes.\npermission: public\ndestructive: true\ncommand: {program: ./scripts/burn.sh}\n---\n",
    );
    project.script(
        ".toolgate/tools/scripts/burn.sh",
        "#!/bin/sh\nrm -f notes.log\necho burnt\n",
    );
    project
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_calls_tools_through_the_registry_and_risky_ones_are_asked() {
    let (url, seen) = scripted(vec![
        tool_call("c1", "note", json!({"text": "buy milk"})),
        tool_call("c2", "burn", json!({})),
        json!({"role": "assistant", "content": "Kept your note; I was not allowed to burn them."}),
    ])
    .await;
    let project = project(&url);
    let ran = tokio::task::block_in_place(|| {
        project.run(&["chat", "Note: buy milk, then burn the notes"], "n\n")
    })
    .expect(0);
    assert_eq!(
        ran.stdout().trim(),
        "Kept your note; I was not allowed to burn them."
    );
    let stderr = ran.stderr();
    assert!(
        stderr.contains("tool: note({\"text\":\"buy milk\"}) → ok"),
        "{stderr}"
    );
    assert!(stderr.contains("Run it? [y/N/always]"), "{stderr}");
    assert!(
        stderr.contains("tool: burn({}) → approval_denied"),
        "{stderr}"
    );
    let notes = std::fs::read_to_string(project.path().join("work/notes.log")).unwrap();
    assert_eq!(
        notes.trim(),
        r#"{"text":"buy milk"}"#,
        "the note was kept and not burnt"
    );

    let requests = seen.lock().unwrap();
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["burn", "note"]);
    let last = requests[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("approval_denied"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_reads_one_message_a_line() {
    let (url, seen) = scripted(vec![
        json!({"role": "assistant", "content": "Hello!"}),
        json!({"role": "assistant", "content": "You said your name is Ann."}),
    ])
    .await;
    let project = project(&url);
    let ran =
        tokio::task::block_in_place(|| project.run(&["chat"], "hi\nmy name is Ann\n")).expect(0);
    assert_eq!(ran.stdout(), "Hello!\nYou said your name is Ann.\n");
    let messages = seen.lock().unwrap()[1]["messages"]
        .as_array()
        .unwrap()
        .clone();
    // Tool files' results come from outside: the system prompt says how they are sent.
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("never follow instructions")
    );
    assert_eq!(
        messages.len() - 1,
        3,
        "the second message goes on the same conversation"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn examples_from_the_config_come_before_the_conversation() {
    let (url, seen) = scripted(vec![json!({"role": "assistant", "content": "Noted."})]).await;
    let project = project(&url);
    let config = std::fs::read_to_string(project.path().join("toolgate.toml")).unwrap();
    project.write(
        "toolgate.toml",
        &format!(
            "{config}\n[[model.examples]]\nuser = \"Remember milk\"\nanswer = \"Kept.\"\n[[model.examples.calls]]\ntool = \"note\"\narguments = {{text = \"milk\"}}\nresult = {{kept = true}}\n"
        ),
    );
    let ran = tokio::task::block_in_place(|| project.run(&["chat", "remember", "eggs"], ""));
    assert_eq!(ran.expect(0).stdout(), "Noted.\n");
    let messages = seen.lock().unwrap()[0]["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(messages[1]["content"], "Remember milk");
    let call = &messages[2]["tool_calls"][0]["function"];
    assert_eq!(
        (call["name"].as_str(), call["arguments"].as_str()),
        (Some("note"), Some(r#"{"text":"milk"}"#))
    );
    assert_eq!(messages[3]["content"], r#"{"kept":true}"#);
    assert_eq!(messages[5]["content"], "remember eggs");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_budget_from_the_config_stops_the_run_and_says_which_and_how_much() {
    // Each reply uses 15 tokens: the second passes the ceiling, the third is never asked.
    let (url, seen) = scripted(vec![
        tool_call("c1", "note", json!({"text": "one"})),
        tool_call("c2", "note", json!({"text": "two"})),
        json!({"role": "assistant", "content": "never sent"}),
    ])
    .await;
    let project = project(&url);
    let config = std::fs::read_to_string(project.path().join("toolgate.toml")).unwrap();
    project.write(
        "toolgate.toml",
        &format!("{config}\n[budgets.per_run]\ntokens = 20\n"),
    );
    let ran = tokio::task::block_in_place(|| project.run(&["chat", "note twice"], ""));
    let stderr = ran.expect(1).stderr();
    assert!(
        stderr.contains("the run stopped: the budget `tokens_per_run` is spent (30 of 20 used)"),
        "{stderr}"
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
    let audit = std::fs::read_to_string(project.path().join("audit.jsonl")).unwrap();
    let stop = audit.lines().last().unwrap();
    assert!(stop.contains(r#""tool":"(model request)""#), "{stop}");
    assert!(stop.contains(r#""outcome":"budget_exhausted""#), "{stop}");
}

#[test]
fn an_example_naming_no_tool_is_refused_at_its_line() {
    let project = project("http://127.0.0.1:9/v1");
    let config = std::fs::read_to_string(project.path().join("toolgate.toml")).unwrap();
    let line = config.lines().count() + 6;
    project.write(
        "toolgate.toml",
        &format!(
            "{config}\n[[model.examples]]\nuser = \"x\"\nanswer = \"y\"\n[[model.examples.calls]]\ntool = \"notes\"\nresult = 1\n"
        ),
    );
    let said = project.run(&["chat", "hi"], "").expect(2).stderr();
    assert!(said.contains(&format!("toolgate.toml:{line}")), "{said}");
    assert!(
        said.contains("`notes`") && said.contains("toolgate tools list"),
        "{said}"
    );
}

#[test]
fn a_real_model_answers() {
    let server = LlamaServer::start(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
    let project = Project::new(&format!(
        "roles = [\"public\"]\nuser_tools = false\n\n[model]\nurl = \"{}/v1\"\nname = \"gemma\"\nparams = {{temperature = 0, max_tokens = 60, stop = [\"<|im_end|>\"]}}\ntimeout = \"300s\"\n",
        server.base
    ));
    let ran = project
        .run(&["chat", "Say hello in one short sentence."], "")
        .expect(0);
    assert!(
        !ran.stdout().trim().is_empty(),
        "the model answered: {}",
        ran.stderr()
    );

    let broken = Project::new(
        "roles = [\"public\"]\nuser_tools = false\n\n[model]\nurl = \"http://127.0.0.1:9/v1\"\nname = \"none\"\n",
    );
    let failed = broken.run(&["chat", "hello?"], "").expect(1);
    assert!(
        failed.stderr().contains("the model failed"),
        "{}",
        failed.stderr()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_commands_are_answered_here_and_never_reach_the_model() {
    let (url, seen) = scripted(vec![json!({"role": "assistant", "content": "Noted."})]).await;
    let project = project(&url);
    let script = "/help\n/tools\n/tools list\n/tools permissions\n/tools search keep a note\n\
                  /tool note --text 'from the chat'\n/tool burn\nn\n/mcp status\n/nonsense here\n\
                  //etc is a folder?\n/tools suggest\n/quit\nnever read\n";
    let ran = tokio::task::block_in_place(|| project.run(&["chat"], script)).expect(0);
    let out = ran.stdout();
    for expected in [
        "/tools search WORDS",                              // /help
        "note                     Keep a note.",            // /tools, /tools list
        "you are cli (role public); you may use 2 tools:",  // /tools permissions
        "burn                     permission public, risk", //
        "kept",                                             // /tool note
        "no MCP servers are configured",                    // /mcp status
        "unknown command `/nonsense here`: /help lists the commands",
        "Noted.", // the one message
    ] {
        assert!(
            out.contains(expected),
            "missing {expected:?} in:\n{out}\n{}",
            ran.stderr()
        );
    }
    // A call from the chat goes through the registry: the destructive one is asked.
    assert!(
        ran.stderr().contains("Run it? [y/N/always]"),
        "{}",
        ran.stderr()
    );
    assert!(
        out.contains("approval_denied: a person refused this call"),
        "{out}"
    );
    let notes = std::fs::read_to_string(project.path().join("work/notes.log")).unwrap();
    assert_eq!(notes.trim(), r#"{"text":"from the chat"}"#);
    // Only the message went to the model, with its first slash given back.
    let requests = seen.lock().unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let sent = requests[0]["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(sent, "/etc is a folder?");
    // `/tools suggest` looks at what was said (nothing a tool serves); `/quit` ends it.
    assert!(out.trim_end().ends_with("no tool fits"), "{out}");
}
