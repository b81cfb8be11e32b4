//! A read-only call the model repeats in the same run is answered from its first result,
//! with a note, and recorded; until a call that may change something runs.

mod agent;

use std::sync::atomic::Ordering;

use agent::{Ran, Scripted, builder, calls, last_results, text};
use serde_json::json;
use toolgate::agent::Agent;
use toolgate::store::MemoryAuditStore;
use toolgate::{Caller, Registry};

fn registry(ran: &Ran) -> Registry {
    builder(ran)
        .audit_store(MemoryAuditStore::new(100))
        .build()
        .unwrap()
}

fn lookup(id: &str, name: &str) -> (String, String, String) {
    (
        id.into(),
        "lookup_pet".into(),
        format!(r#"{{"name": "{name}"}}"#),
    )
}

fn turn(list: &[(String, String, String)]) -> toolgate::agent::ModelReply {
    let borrowed: Vec<(&str, &str, &str)> = list
        .iter()
        .map(|(id, name, arguments)| (id.as_str(), name.as_str(), arguments.as_str()))
        .collect();
    calls(&borrowed)
}

#[tokio::test]
async fn a_repeated_read_only_call_is_answered_from_its_first_result_and_recorded() {
    let ran = Ran::default();
    let registry = registry(&ran);
    let model = Scripted::new([
        turn(&[lookup("c1", "Rex")]),
        // The same call again, its arguments written otherwise, and a new one.
        calls(&[
            ("c2", "lookup_pet", r#"{ "name":"Rex" }"#),
            ("c3", "lookup_pet", r#"{"name": "Bella"}"#),
        ]),
        text("Rex and Bella are dogs."),
    ]);
    let caller = Caller::new("cust-1", "customer");
    let run = Agent::builder(registry.clone(), model.clone())
        .build()
        .run(&caller, "What are Rex and Bella?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Rex and Bella are dogs."));
    assert_eq!(
        ran.lookups.load(Ordering::SeqCst),
        2,
        "Rex once, Bella once"
    );

    let results = last_results(&model.seen()[2]);
    let (id, repeated) = &results[0];
    assert_eq!(id, "c2");
    let repeated = repeated.as_ref().unwrap();
    assert_eq!(repeated["result"], json!({"pet": "Rex", "species": "dog"}));
    let note = repeated["note"].as_str().unwrap();
    assert!(note.contains("the same call as `c1`"), "{note}");
    assert_eq!(
        results[1].1.as_ref().unwrap(),
        &json!({"pet": "Bella", "species": "dog"})
    );
    assert_eq!(run.calls().len(), 3, "the run's record has every call");

    let history = registry.history("cust-1", 10).await.unwrap();
    let record = history
        .iter()
        .find(|record| record.call_id == "c2")
        .unwrap();
    assert_eq!(
        (record.decision.as_str(), record.outcome.as_str()),
        ("repeated", "ok")
    );
    assert_eq!(record.arguments, json!({"name": "Rex"}));
}

#[tokio::test]
async fn identical_calls_of_one_turn_run_once() {
    let ran = Ran::default();
    let copies: Vec<_> = (0..6).map(|n| lookup(&format!("c{n}"), "Rex")).collect();
    let model = Scripted::new([turn(&copies), text("Rex is a dog.")]);
    let run = Agent::builder(registry(&ran), model.clone())
        .build()
        .run(&Caller::new("cust-1", "customer"), "What is Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
    assert_eq!(ran.lookups.load(Ordering::SeqCst), 1);
    let results = last_results(&model.seen()[1]);
    assert_eq!(results.len(), 6, "one result per call, in order");
    assert_eq!(results[0].1.as_ref().unwrap()["pet"], "Rex");
    for (_, result) in &results[1..] {
        assert_eq!(result.as_ref().unwrap()["result"]["pet"], "Rex");
    }
}

#[tokio::test]
async fn after_a_call_that_may_change_something_a_repeat_runs_again() {
    let ran = Ran::default();
    let model = Scripted::new([
        turn(&[lookup("c1", "Rex")]),
        calls(&[("c2", "delete_everything", "{}")]),
        turn(&[lookup("c3", "Rex")]),
        text("Checked again."),
    ]);
    let run = Agent::builder(registry(&ran), model)
        .build()
        .run(&Caller::new("root", "admin"), "Look, delete, look again")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Checked again."));
    assert_eq!(ran.lookups.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_failed_call_is_not_an_answer_to_repeat() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("c1", "lookup_pet", r#"{"name": ""}"#)]),
        calls(&[("c2", "lookup_pet", r#"{"name": ""}"#)]),
        text("I could not look that up."),
    ]);
    let run = Agent::builder(registry(&ran), model.clone())
        .build()
        .run(&Caller::new("cust-1", "customer"), "What is it?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("I could not look that up."));
    let results = last_results(&model.seen()[2]);
    let error = results[0].1.as_ref().unwrap_err();
    assert_eq!(
        error.code,
        toolgate::ErrorCode::InvalidArguments,
        "asked again, refused again"
    );
}

#[tokio::test]
async fn a_repeat_of_an_untrusted_result_is_enveloped_once() {
    let ran = Ran::default();
    let mut definition = toolgate::ToolDefinition::new(
        "read_page",
        "Read a page.",
        "public",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    );
    definition.hints.read_only = true;
    definition.untrusted_results = true;
    let page = toolgate::FnTool::new(definition, |_, _| async {
        Ok(json!("Opening hours: 9-5."))
    });
    let registry = builder(&ran).tool(page).build().unwrap();
    let model = Scripted::new([
        calls(&[("c1", "read_page", "{}")]),
        calls(&[("c2", "read_page", "{}")]),
        text("9 to 5."),
    ]);
    Agent::builder(registry, model.clone())
        .build()
        .run(&Caller::new("cust-1", "customer"), "When are you open?")
        .await
        .unwrap();
    let results = last_results(&model.seen()[2]);
    let seen = results[0].1.as_ref().unwrap().as_str().unwrap().to_owned();
    assert_eq!(seen.matches("⟦tool-data ").count(), 1, "{seen}");
    assert!(!seen.contains("[marker removed]"), "{seen}");
    assert!(seen.contains("Opening hours: 9-5."), "{seen}");
    assert!(seen.contains("the same call as `c1`"), "{seen}");
}

#[tokio::test]
async fn a_tools_own_error_is_answered_again_without_running_it() {
    let ran = Ran::default();
    let tries = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&tries);
    let mut definition = toolgate::ToolDefinition::new(
        "read_file",
        "Read a file.",
        "public",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    definition.hints.read_only = true;
    let read = toolgate::FnTool::new(definition, move |_, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Err(toolgate::ToolError::new("not_found", "no such file")) }
    });
    let registry = builder(&ran).tool(read).build().unwrap();
    let model = Scripted::new([
        calls(&[("c1", "read_file", r#"{"path": "Documents"}"#)]),
        calls(&[("c2", "read_file", r#"{"path": "Documents"}"#)]),
        text("There is no such file."),
    ]);
    Agent::builder(registry, model.clone())
        .build()
        .run(&Caller::new("cust-1", "customer"), "Read Documents")
        .await
        .unwrap();
    assert_eq!(tries.load(Ordering::SeqCst), 1);
    let results = last_results(&model.seen()[2]);
    let error = results[0].1.as_ref().unwrap_err();
    assert_eq!(error.code.as_str(), "not_found");
    assert!(
        error.message.contains("the same call as `c1`"),
        "{}",
        error.message
    );
    assert!(error.message.contains("no such file"), "{}", error.message);
}

#[tokio::test]
async fn after_a_turn_of_only_repeats_the_model_is_asked_for_its_answer_without_tools() {
    let ran = Ran::default();
    let model = Scripted::new([
        turn(&[lookup("c1", "Rex")]),
        turn(&[lookup("c2", "Rex")]),
        text("Rex is a dog."),
        text("You are welcome."),
    ]);
    let agent = Agent::builder(registry(&ran), model.clone()).build();
    let caller = Caller::new("cust-1", "customer");
    let run = agent.run(&caller, "What is Rex?").await.unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
    let seen = model.seen();
    assert_eq!(seen[1].tools, ["lookup_pet", "transfer"]);
    assert!(
        seen[2].tools.is_empty(),
        "asked for its answer: {:?}",
        seen[2].tools
    );
    // The next message of the conversation offers the tools again.
    let options = toolgate::agent::RunOptions::default();
    agent
        .follow_up(&caller, run.id(), "Thanks", options)
        .await
        .unwrap();
    assert_eq!(model.seen()[3].tools, ["lookup_pet", "transfer"]);
}

#[tokio::test]
async fn a_call_refused_at_the_tool_call_limit_runs_when_asked_again() {
    let ran = Ran::default();
    let model = Scripted::new([
        turn(&[lookup("c1", "Rex"), lookup("c2", "Bella")]),
        turn(&[lookup("c3", "Bella")]),
        text("Both are dogs."),
    ]);
    let agent = Agent::builder(registry(&ran), model.clone())
        .max_tool_calls(1)
        .build();
    let caller = Caller::new("cust-1", "customer");
    let run = agent.run(&caller, "Rex and Bella?").await.unwrap();
    // The first turn ran Rex and refused Bella at the limit; the run stopped there.
    assert_eq!(run.status().name(), "tool_call_limit");
    let refused = run.calls()[1].result.as_ref().unwrap_err();
    assert_eq!(refused.code.as_str(), "tool_call_limit");
    // Asked again in the next message, Bella runs: a refusal is no answer to repeat.
    let options = toolgate::agent::RunOptions::default();
    let run = agent
        .follow_up(&caller, run.id(), "Go on", options)
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Both are dogs."));
    assert_eq!(ran.lookups.load(Ordering::SeqCst), 2);
}
