//! An assistant's stories against a real small model (llama.cpp's `llama-server` with Gemma
//! 3 270M, set up by `tests/llm/setup.sh`), with example turns: "What files are in my
//! Documents folder?", "Read my project README and summarize it", "Delete my Downloads
//! folder" (answered n, then y).
//!
//! Asserted is what toolgate controls: no run ends in a model failure (a request refused
//! twice the same way is not sent a third time), a read-only call the model repeats runs
//! once per run, and the risky delete is asked about and runs exactly as often as it is
//! approved (never after an n). What the tiny model does (which tools it called, whether it
//! answered) is reported on stderr, not asserted.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::agent::models::{HttpSettings, OpenAiChat};
use toolgate::agent::{Agent, Example, Run, RunStatus};
use toolgate::approval::ApprovalAnswer;
use toolgate::{Caller, FnTool, Registry, Risk, ToolDefinition};
use toolgate_test_support::LlamaServer;

/// How often each tool ran with each arguments, and what the approver was asked.
#[derive(Default)]
struct Seen {
    ran: Mutex<HashMap<String, usize>>,
    asked: AtomicUsize,
    approved: AtomicUsize,
    deleted: AtomicUsize,
}

impl Seen {
    fn ran(&self, tool: &str, arguments: &Value) {
        *self
            .ran
            .lock()
            .unwrap()
            .entry(format!("{tool} {arguments}"))
            .or_default() += 1;
    }
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"path": {"type": "string", "description": "A path in the user's home, e.g. Documents"}},
        "required": ["path"], "additionalProperties": false})
}

fn folder(path: &str) -> Option<Value> {
    let path = path.trim_matches('/').to_lowercase();
    match path.as_str() {
        "documents" | "~/documents" => Some(json!(["taxes-2025.pdf", "cv.docx", "recipes.txt"])),
        "downloads" | "~/downloads" => Some(json!(["setup.exe", "movie.mkv"])),
        "pictures" => Some(json!(["cat.jpg", "beach.png"])),
        _ => None,
    }
}

fn file(path: &str) -> Option<&'static str> {
    let path = path.trim_matches('/').to_lowercase();
    path.ends_with("readme.md").then_some(
        "# Tide\n\nTide keeps a shared shopping list in sync between phones. It runs offline and merges changes when a phone reconnects.",
    )
}

fn tool(
    seen: &Arc<Seen>,
    (name, description): (&str, &str),
    answer: fn(&str) -> Result<Value, String>,
) -> FnTool {
    let seen = Arc::clone(seen);
    let mut definition = ToolDefinition::new(name, description, "user", schema());
    definition.hints.read_only = name != "delete_directory";
    if name == "delete_directory" {
        definition.hints.destructive = true;
        definition.risk = Risk::High;
    }
    let name = name.to_owned();
    FnTool::new(definition, move |_, arguments| {
        seen.ran(&name, &arguments);
        if name == "delete_directory" {
            seen.deleted.fetch_add(1, Ordering::SeqCst);
        }
        let path = arguments["path"].as_str().unwrap_or_default().to_owned();
        async move { answer(&path).map_err(|message| toolgate::ToolError::new("not_found", message)) }
    })
}

fn registry(seen: &Arc<Seen>, allow: &Arc<AtomicBool>) -> Registry {
    let list = tool(
        seen,
        ("list_directory", "List the files in a folder."),
        |path| folder(path).ok_or_else(|| format!("no folder {path}")),
    );
    let read = tool(seen, ("read_file", "Read a text file."), |path| {
        file(path)
            .map(|text| json!(text))
            .ok_or_else(|| format!("no file {path}"))
    });
    let delete = tool(
        seen,
        ("delete_directory", "Delete a folder and everything in it."),
        |path| Ok(json!({"deleted": path})),
    );
    let (asked, allow) = (Arc::clone(seen), Arc::clone(allow));
    Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .tool(list)
        .tool(read)
        .tool(delete)
        .approver("terminal", move |_request| {
            asked.asked.fetch_add(1, Ordering::SeqCst);
            let yes = allow.load(Ordering::SeqCst);
            if yes {
                asked.approved.fetch_add(1, Ordering::SeqCst);
            }
            async move {
                match yes {
                    true => ApprovalAnswer::Approve,
                    false => ApprovalAnswer::Deny {
                        reason: "the user said no".into(),
                    },
                }
            }
        })
        .build()
        .unwrap()
}

fn examples() -> [Example; 3] {
    [
        Example::new("What files are in my Pictures folder?")
            .call(
                "list_directory",
                json!({"path": "Pictures"}),
                json!(["cat.jpg", "beach.png"]),
            )
            .answer("Your Pictures folder holds cat.jpg and beach.png."),
        Example::new("Read my notes/todo.md and summarize it")
            .call(
                "read_file",
                json!({"path": "notes/todo.md"}),
                json!("- buy milk\n- call Ann"),
            )
            .answer("Your todo list says to buy milk and to call Ann."),
        Example::new("Delete my Temp folder")
            .call(
                "delete_directory",
                json!({"path": "Temp"}),
                json!({"deleted": "Temp"}),
            )
            .answer("I deleted your Temp folder."),
    ]
}

fn agent(base: &str, registry: Registry) -> Agent {
    let model = OpenAiChat::new(format!("{base}/v1"), "gemma")
        .param("temperature", 0)
        .param("max_tokens", 120)
        .param("stop", json!(["<|im_end|>"]))
        .http(HttpSettings {
            timeout: Duration::from_secs(300),
            ..HttpSettings::default()
        });
    let mut builder = Agent::builder(registry, model)
        .system("You are a file assistant. Use a tool to look, then answer in one sentence.")
        .max_turns(4);
    for example in examples() {
        builder = builder.example(example);
    }
    builder.build()
}

/// One story: the run, and what the tools saw during it.
async fn story(base: &str, message: &str, allow: bool) -> (Run, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let registry = registry(&seen, &Arc::new(AtomicBool::new(allow)));
    let caller = Caller::new("ann", "user");
    let run = agent(base, registry).run(&caller, message).await.unwrap();
    (run, seen)
}

fn report(message: &str, run: &Run, seen: &Seen) -> bool {
    let calls: Vec<String> = run
        .calls()
        .iter()
        .map(|call| {
            format!(
                "{}({}) → {}",
                call.tool,
                call.arguments,
                match &call.result {
                    Ok(_) => "ok".to_owned(),
                    Err(error) => error.code.to_string(),
                }
            )
        })
        .collect();
    let answered = matches!(run.status(), RunStatus::Finished { text } if !text.trim().is_empty());
    eprintln!(
        "story {message:?}: {} turn(s), calls [{}], ran {:?}, asked {} approved {}, status {}: {:?}",
        run.turns(),
        calls.join(", "),
        seen.ran.lock().unwrap(),
        seen.asked.load(Ordering::SeqCst),
        seen.approved.load(Ordering::SeqCst),
        run.status().name(),
        run.text().unwrap_or_default(),
    );
    answered
}

/// What toolgate controls, whatever the model did.
fn holds(run: &Run, seen: &Seen) {
    assert!(
        !matches!(run.status(), RunStatus::ModelFailed { .. }),
        "no run ends in a model failure: {}",
        run.status()
    );
    // A repeated read runs once, and once more after each delete that ran (it may have
    // changed what the read sees); the delete runs each time it is approved.
    let (asked, approved) = (
        seen.asked.load(Ordering::SeqCst),
        seen.approved.load(Ordering::SeqCst),
    );
    let deleted = seen.deleted.load(Ordering::SeqCst);
    let ran = seen.ran.lock().unwrap();
    let reads = ran
        .iter()
        .filter(|(call, _)| !call.starts_with("delete_directory"));
    for (call, times) in reads {
        assert!(
            *times <= 1 + deleted,
            "`{call}` ran {times} times in one run, with {deleted} deletes: a repeat runs once"
        );
    }
    assert_eq!(deleted, approved, "a delete runs exactly when approved");
    let delete_calls = run
        .calls()
        .iter()
        .filter(|call| call.tool == "delete_directory")
        .count();
    assert!(
        asked >= delete_calls.min(1),
        "every risky call is asked about"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistants_stories_with_example_turns() {
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let server = tokio::task::spawn_blocking(|| LlamaServer::start(folder))
        .await
        .unwrap();
    let stories = [
        ("What files are in my Documents folder?", false),
        ("Read my project README and summarize it", false),
        ("Delete my Downloads folder", false),
        ("Delete my Downloads folder", true),
    ];
    let mut answered = 0;
    for (message, allow) in stories {
        let (run, seen) = story(&server.base, message, allow).await;
        answered += usize::from(report(message, &run, &seen));
        holds(&run, &seen);
        if !allow {
            assert_eq!(seen.deleted.load(Ordering::SeqCst), 0, "an n is honoured");
        }
    }
    eprintln!(
        "{answered} of {} runs finished with an answer",
        stories.len()
    );
}
