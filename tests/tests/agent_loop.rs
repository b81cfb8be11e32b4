//! The agent loop over a scripted model: every call the model makes goes through the
//! registry (roles, validation, policy, approval, audit), results come back in order with
//! their ids, and every way a run stops is a status.

mod agent;

use std::sync::Arc;
use std::time::Duration;

use agent::{Ran, Scripted, builder, calls, last_results, text};
use serde_json::{Value, json};
use toolgate::agent::{
    Agent, AgentError, CallDecision, FreeText, MemoryRunStore, Message, Model, ModelError,
    ModelErrorKind, ModelFuture, ModelRequest, RunOptions, RunStatus,
};
use toolgate::approval::{ApprovalAnswer, ApprovalRequest, MemoryPendingStore};
use toolgate::events::EventKind;
use toolgate::{Caller, CancellationToken, ErrorCode, FnTool, ToolCall, ToolDefinition};

fn customer() -> Caller {
    Caller::new("cust-1", "customer")
}

fn staff() -> Caller {
    Caller::new("dr-lee", "staff")
}

fn agent(ran: &Ran, model: Scripted) -> Agent {
    Agent::builder(builder(ran).build().unwrap(), model)
        .system("You are the clinic's assistant.")
        .build()
}

#[tokio::test]
async fn a_question_runs_a_tool_and_the_model_answers_with_its_result() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("c1", "lookup_pet", r#"{"name": "Rex"}"#)]),
        text("Rex is a dog."),
    ]);
    let run = agent(&ran, model.clone())
        .run(&customer(), "What is Rex?")
        .await
        .unwrap();

    assert_eq!(run.text(), Some("Rex is a dog."));
    assert_eq!(run.turns(), 2);
    let seen = model.seen();
    assert_eq!(
        seen[0].system.as_deref(),
        Some("You are the clinic's assistant.")
    );
    // The customer's tools, and nothing above its role.
    assert_eq!(seen[0].tools, ["lookup_pet", "transfer"]);
    assert_eq!(
        last_results(&seen[1]),
        [("c1".to_owned(), Ok(json!({"pet": "Rex", "species": "dog"})))]
    );
    let record = &run.calls()[0];
    assert_eq!(
        (record.turn, record.tool.as_str(), record.call_id.as_str()),
        (1, "lookup_pet", "c1")
    );
    assert_eq!(record.arguments, json!({"name": "Rex"}));
    assert!(record.result.is_ok());
    // The whole conversation: question, call, result, answer.
    assert!(matches!(
        run.transcript(),
        [
            Message::User { .. },
            Message::Assistant { .. },
            Message::ToolResults { .. },
            Message::Assistant { .. }
        ]
    ));
}

#[tokio::test]
async fn parallel_calls_come_back_in_call_order_with_their_ids_whatever_happens_to_them() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[
            ("a", "lookup_pet", r#"{"name": "Rex"}"#),
            ("b", "delete_everything", "{}"),
            ("c", "lookup_pet", r#"{"name": ""}"#),
            ("d", "lookup_pet", "{not json"),
            ("e", "no_such_tool", "{}"),
            ("f", "lookup_pet", r#"{"name": "Tom"}"#),
        ]),
        text("done"),
    ]);
    let run = agent(&ran, model.clone())
        .run(&customer(), "go")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("done"));
    let results = last_results(&model.seen()[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c", "d", "e", "f"]);
    let code = |index: usize| {
        results[index]
            .1
            .as_ref()
            .err()
            .map(|error| error.code.clone())
    };
    assert_eq!(code(0), None);
    // A tool above the caller's role is answered exactly like one that does not exist.
    assert_eq!(code(1), Some(ErrorCode::UnknownTool));
    assert_eq!(code(4), Some(ErrorCode::UnknownTool));
    // The same answer the name gets where the tool does not exist at all.
    let hidden = &results[1].1.as_ref().unwrap_err().message;
    let without = builder(&ran).build().unwrap();
    assert!(without.unregister("delete_everything"));
    let missing = without
        .call(&customer(), ToolCall::new("b", "delete_everything", "{}"))
        .await;
    assert_eq!(hidden, &missing.error().unwrap().message);
    assert_eq!(code(2), Some(ErrorCode::InvalidArguments));
    assert_eq!(code(3), Some(ErrorCode::InvalidArguments));
    assert_eq!(code(5), None);
    assert_eq!(ran.lookups.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn invalid_arguments_go_back_to_the_model_which_corrects_its_call() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("c1", "transfer", r#"{"amount": "ten", "to": "bob"}"#)]),
        calls(&[("c2", "lookup_pet", r#"{"name": "Rex"}"#)]),
        text("ok"),
    ]);
    let run = agent(&ran, model.clone())
        .run(&customer(), "go")
        .await
        .unwrap();
    let first = last_results(&model.seen()[1]);
    let error = first[0].1.as_ref().unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArguments);
    assert!(error.message.contains("amount"), "{}", error.message);
    assert!(last_results(&model.seen()[2])[0].1.is_ok());
    assert_eq!(run.calls().len(), 2);
    assert_eq!(run.text(), Some("ok"));
}

#[tokio::test]
async fn a_risky_call_stops_the_run_and_an_approved_resume_runs_it_exactly_once() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[
            ("look", "lookup_pet", r#"{"name": "Rex"}"#),
            ("pay", "transfer", r#"{"amount": 40, "to": "clinic"}"#),
        ]),
        text("Paid."),
    ]);
    let agent = agent(&ran, model.clone());
    let run = agent.run(&customer(), "pay the clinic").await.unwrap();
    let RunStatus::NeedsApproval { pending } = run.status() else {
        panic!("expected needs_approval, got {:?}", run.status());
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].call_id.as_str(), pending[0].tool.as_str()),
        ("pay", "transfer")
    );
    assert_eq!(pending[0].arguments, json!({"amount": 40, "to": "clinic"}));
    assert_eq!(ran.transfers(), 0);
    assert_eq!(model.seen().len(), 1);

    // The customer may not approve its own call: nothing runs, the run still waits.
    let refused = agent
        .resume(&customer(), run.id(), [CallDecision::approve("pay")])
        .await
        .unwrap_err();
    assert!(
        matches!(refused, AgentError::Decision { .. }),
        "{refused:?}"
    );
    assert_eq!(ran.transfers(), 0);

    // The approver learns what came of its decision, not the conversation.
    let decided = agent
        .decide(&staff(), run.id(), [CallDecision::approve("pay")])
        .await
        .unwrap();
    assert_eq!(ran.transfers(), 1);
    assert_eq!(decided.still_waiting, 0);
    assert_eq!(decided.outcomes.len(), 1);
    assert_eq!(
        decided.outcomes[0].result,
        Ok(json!({"sent": 40, "to": "clinic"}))
    );
    assert_eq!(model.seen().len(), 1, "the model waits for the owner");
    let waiting = agent.get(&customer(), run.id()).await.unwrap().unwrap();
    assert_eq!(waiting.status(), &RunStatus::Decided);

    // Its owner goes on.
    let run = agent.resume(&customer(), run.id(), []).await.unwrap();
    assert_eq!(run.text(), Some("Paid."));
    assert_eq!(ran.transfers(), 1);
    // The model got both results of that turn, in call order.
    let results = last_results(&model.seen()[1]);
    assert_eq!(results[0].0, "look");
    assert_eq!(
        results[1],
        ("pay".to_owned(), Ok(json!({"sent": 40, "to": "clinic"})))
    );

    // Nothing runs twice: the run no longer waits, and its ticket is spent.
    let again = agent
        .decide(&staff(), run.id(), [CallDecision::approve("pay")])
        .await;
    assert_eq!(again.unwrap_err(), AgentError::RunNotFound);
    let again = agent.resume(&customer(), run.id(), []).await;
    assert_eq!(
        again.unwrap_err(),
        AgentError::NotWaiting { status: "finished" }
    );
    assert_eq!(ran.transfers(), 1);
}

#[tokio::test]
async fn a_denied_call_gives_the_model_the_refusal_and_the_run_goes_on() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("pay", "transfer", r#"{"amount": 40, "to": "clinic"}"#)]),
        text("The payment was refused."),
    ]);
    let agent = agent(&ran, model.clone());
    let run = agent.run(&customer(), "pay").await.unwrap();
    agent
        .decide(
            &staff(),
            run.id(),
            [CallDecision::deny("pay", "no payments on Sundays")],
        )
        .await
        .unwrap();
    let run = agent.resume(&customer(), run.id(), []).await.unwrap();
    assert_eq!(run.text(), Some("The payment was refused."));
    assert_eq!(ran.transfers(), 0);
    let results = last_results(&model.seen()[1]);
    let error = results[0].1.as_ref().unwrap_err();
    assert_eq!(error.code, ErrorCode::ApprovalDenied);
    assert!(error.message.contains("no payments on Sundays"));
}

#[tokio::test]
async fn a_call_approved_through_the_registry_lets_its_owner_go_on() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("pay", "transfer", r#"{"amount": 5, "to": "bob"}"#)]),
        text("Sent."),
    ]);
    let agent = agent(&ran, model.clone());
    let run = agent.run(&customer(), "pay bob").await.unwrap();
    let ticket = run.pending()[0].ticket.clone();

    // An approver decides where approvals are listed (the HTTP routes call the same).
    let listed = agent.registry().pending_approvals(&staff()).await.unwrap();
    assert_eq!(listed.len(), 1);
    agent.registry().approve(&ticket, &staff()).await.unwrap();
    assert_eq!(ran.transfers(), 1);

    let run = agent.resume(&customer(), run.id(), []).await.unwrap();
    assert_eq!(run.text(), Some("Sent."));
    assert_eq!(ran.transfers(), 1);
    assert_eq!(
        last_results(&model.seen()[1])[0].1,
        Ok(json!({"sent": 5, "to": "bob"}))
    );
}

#[tokio::test]
async fn someone_else_can_neither_see_nor_go_on_with_a_run() {
    let ran = Ran::default();
    let model = Scripted::new([calls(&[(
        "pay",
        "transfer",
        r#"{"amount": 5, "to": "bob"}"#,
    )])]);
    let agent = agent(&ran, model);
    let run = agent.run(&customer(), "pay bob").await.unwrap();
    let stranger = Caller::new("cust-2", "customer");
    assert!(agent.get(&stranger, run.id()).await.unwrap().is_none());
    assert!(agent.get(&customer(), run.id()).await.unwrap().is_some());
    assert_eq!(
        agent.resume(&stranger, run.id(), []).await.unwrap_err(),
        AgentError::RunNotFound
    );
    let unknown = agent
        .decide(&staff(), run.id(), [CallDecision::approve("nope")])
        .await;
    assert!(matches!(
        unknown.unwrap_err(),
        AgentError::UnknownCall { .. }
    ));
    assert_eq!(ran.transfers(), 0);
    // The run is intact and still waits; its owner cannot write to it meanwhile.
    assert_eq!(
        agent
            .get(&customer(), run.id())
            .await
            .unwrap()
            .unwrap()
            .pending()
            .len(),
        1
    );
    let busy = agent
        .follow_up(&customer(), run.id(), "hello?", RunOptions::default())
        .await;
    assert_eq!(busy.unwrap_err(), AgentError::AwaitingApproval);
    assert_eq!(
        agent
            .get(&customer(), run.id())
            .await
            .unwrap()
            .unwrap()
            .pending()
            .len(),
        1
    );
}

#[tokio::test]
async fn an_in_process_approver_is_asked_and_the_run_does_not_stop() {
    let ran = Ran::default();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen_by_approver = Arc::clone(&asked);
    let registry = builder(&ran)
        .approver("terminal", move |request: ApprovalRequest| {
            seen_by_approver
                .lock()
                .unwrap()
                .push(request.tool.name.clone());
            async { ApprovalAnswer::Approve }
        })
        .build()
        .unwrap();
    let model = Scripted::new([
        calls(&[("pay", "transfer", r#"{"amount": 5, "to": "bob"}"#)]),
        text("Sent."),
    ]);
    let agent = Agent::builder(registry, model).build();
    let mut events = agent.registry().events();
    let run = agent.run(&customer(), "pay bob").await.unwrap();
    assert_eq!(run.text(), Some("Sent."));
    assert_eq!(ran.transfers(), 1);
    assert_eq!(*asked.lock().unwrap(), ["transfer"]);

    let mut kinds = Vec::new();
    while let Ok(event) = events.try_recv() {
        assert_eq!(event.run.as_deref(), Some(run.id().as_str()));
        assert_eq!(event.caller, "cust-1");
        kinds.push(
            serde_json::to_value(&*event).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(
        kinds,
        [
            "model_request",
            "model_response",
            "call_requested",
            "approval_requested",
            "approval_decided",
            "call_finished",
            "model_request",
            "model_response",
            "run_finished"
        ]
    );
}

#[tokio::test]
async fn max_turns_counts_model_calls_and_ends_with_its_status() {
    let ran = Ran::default();
    let looping =
        (0..10).map(|i| calls(&[(&*format!("c{i}"), "lookup_pet", r#"{"name": "Rex"}"#)]));
    let model = Scripted::new(looping.collect::<Vec<_>>());
    let agent = Agent::builder(builder(&ran).build().unwrap(), model.clone())
        .max_turns(3)
        .build();
    let run = agent.run(&customer(), "loop").await.unwrap();
    assert_eq!(run.status(), &RunStatus::MaxTurns { turns: 3 });
    assert_eq!(model.seen().len(), 3);
    // Every call of the last turn was answered: the transcript could be sent again.
    assert!(matches!(
        run.transcript().last(),
        Some(Message::ToolResults { .. })
    ));

    // A follow-up counts afresh.
    let run = agent
        .follow_up(&customer(), run.id(), "again", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(run.status(), &RunStatus::MaxTurns { turns: 3 });
    assert_eq!(run.turns(), 6);
}

#[tokio::test]
async fn calls_over_the_tool_call_limit_do_not_run_and_the_run_says_why_it_ended() {
    let ran = Ran::default();
    let model = Scripted::new([calls(&[
        ("a", "lookup_pet", r#"{"name": "A"}"#),
        ("b", "lookup_pet", r#"{"name": "B"}"#),
        ("c", "lookup_pet", r#"{"name": "C"}"#),
    ])]);
    let agent = Agent::builder(builder(&ran).build().unwrap(), model)
        .max_tool_calls(2)
        .build();
    let run = agent.run(&customer(), "three").await.unwrap();
    assert_eq!(run.status(), &RunStatus::ToolCallLimit { calls: 2 });
    assert_eq!(ran.lookups.load(std::sync::atomic::Ordering::SeqCst), 2);
    let Some(Message::ToolResults { results }) = run.transcript().last() else {
        panic!()
    };
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[2].result.as_ref().unwrap_err().code.as_str(),
        "tool_call_limit"
    );
}

fn hanging_tool() -> FnTool {
    let mut definition = ToolDefinition::new(
        "wait_forever",
        "Never ends.",
        "public",
        json!({"type": "object"}),
    );
    definition.hints.read_only = true;
    FnTool::new(definition, |_, _| async {
        tokio::time::sleep(Duration::from_secs(24 * 3600)).await;
        Ok(Value::Null)
    })
}

#[tokio::test(start_paused = true)]
async fn the_time_budget_cancels_a_hanging_call_and_ends_the_run() {
    let ran = Ran::default();
    let registry = builder(&ran)
        .tool(hanging_tool())
        .no_default_timeout()
        .build()
        .unwrap();
    let model = Scripted::new([calls(&[("w", "wait_forever", "{}")])]);
    let agent = Agent::builder(registry, model)
        .time_budget(Duration::from_secs(5))
        .build();
    let run = agent.run(&customer(), "wait").await.unwrap();
    assert_eq!(run.status(), &RunStatus::TimeBudget { budget_ms: 5000 });
    let Some(Message::ToolResults { results }) = run.transcript().last() else {
        panic!()
    };
    assert_eq!(
        results[0].result.as_ref().unwrap_err().code,
        ErrorCode::Cancelled
    );
}

#[tokio::test]
async fn cancelling_from_outside_stops_a_running_call_and_the_run() {
    let ran = Ran::default();
    let registry = builder(&ran)
        .tool(hanging_tool())
        .no_default_timeout()
        .build()
        .unwrap();
    let model = Scripted::new([calls(&[("w", "wait_forever", "{}")])]);
    let agent = Agent::builder(registry, model).build();
    let cancel = CancellationToken::new();
    let mut events = agent.registry().events();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        // Cancel once the call is running.
        while let Ok(event) = events.recv().await {
            if matches!(event.kind, EventKind::CallRequested { .. }) {
                stopper.cancel();
            }
        }
    });
    let options = RunOptions {
        cancel: Some(cancel),
        ..RunOptions::default()
    };
    let run = agent.run_with(&customer(), "wait", options).await.unwrap();
    assert_eq!(run.status(), &RunStatus::Cancelled);

    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let model = Scripted::new([]);
    let agent = Agent::builder(builder(&ran).build().unwrap(), model.clone()).build();
    let options = RunOptions {
        cancel: Some(cancelled),
        ..RunOptions::default()
    };
    let run = agent.run_with(&customer(), "never", options).await.unwrap();
    assert_eq!(run.status(), &RunStatus::Cancelled);
    assert!(model.seen().is_empty());
}

#[tokio::test]
async fn a_long_result_is_cut_for_the_model_with_a_marker() {
    let ran = Ran::default();
    let long_name = "R".repeat(5000);
    let arguments = json!({"name": long_name}).to_string();
    let model = Scripted::new([calls(&[("c", "lookup_pet", &arguments)]), text("ok")]);
    let agent = Agent::builder(builder(&ran).build().unwrap(), model.clone())
        .max_result_bytes(100)
        .build();
    agent.run(&customer(), "long").await.unwrap();
    let result = last_results(&model.seen()[1])[0].1.clone().unwrap();
    let text = result.as_str().unwrap();
    assert!(text.len() < 200, "{text}");
    assert!(text.contains("more bytes left out"), "{text}");
}

#[tokio::test]
async fn a_tool_selector_narrows_what_the_model_sees_but_cannot_widen_it() {
    let ran = Ran::default();
    let registry = builder(&ran).build().unwrap();
    let everything: Vec<_> = registry.visible_to(&Caller::new("root", "admin")).to_vec();
    let model = Scripted::new([text("hi")]);
    let agent = Agent::builder(registry, model.clone())
        .select_tools(move |_: &Caller, _: &[Message], _: &toolgate::ToolList| everything.clone())
        .build();
    agent.run(&customer(), "hi").await.unwrap();
    assert_eq!(model.seen()[0].tools, ["lookup_pet", "transfer"]);
}

#[tokio::test]
async fn a_run_waiting_for_approval_survives_a_restart_with_persistent_stores() {
    let ran = Ran::default();
    let runs = Arc::new(MemoryRunStore::default());
    let pending = Arc::new(MemoryPendingStore::default());
    let start = |model: Scripted| {
        let registry = builder(&ran)
            .approval_key(b"the same key after a restart".to_vec())
            .pending_store(Arc::clone(&pending))
            .build()
            .unwrap();
        Agent::builder(registry, model)
            .run_store(Arc::clone(&runs))
            .build()
    };
    let before = start(Scripted::new([calls(&[(
        "pay",
        "transfer",
        r#"{"amount": 7, "to": "bob"}"#,
    )])]));
    let run = before.run(&customer(), "pay").await.unwrap();
    // What a database would hold.
    let stored = serde_json::to_string(&run).unwrap();
    assert_eq!(
        serde_json::from_str::<toolgate::agent::Run>(&stored).unwrap(),
        run
    );
    drop(before);

    let after = start(Scripted::new([text("Sent after the restart.")]));
    after
        .decide(&staff(), run.id(), [CallDecision::approve("pay")])
        .await
        .unwrap();
    let resumed = after.resume(&customer(), run.id(), []).await.unwrap();
    assert_eq!(resumed.text(), Some("Sent after the restart."));
    assert_eq!(ran.transfers(), 1);
}

/// A model that fails.
struct Broken;
impl Model for Broken {
    fn respond<'a>(&'a self, _: ModelRequest<'a>) -> ModelFuture<'a> {
        Box::pin(async {
            Err(ModelError::new(
                ModelErrorKind::Connect,
                "connection refused",
            ))
        })
    }
}

#[tokio::test]
async fn a_model_that_fails_ends_the_run_with_the_error_kept() {
    let agent = Agent::builder(builder(&Ran::default()).build().unwrap(), Broken).build();
    let run = agent.run(&customer(), "hi").await.unwrap();
    let RunStatus::ModelFailed { error } = run.status() else {
        panic!("{:?}", run.status())
    };
    assert_eq!(error.kind, ModelErrorKind::Connect);
    assert!(agent.get(&customer(), run.id()).await.unwrap().is_some());
}

#[tokio::test]
async fn free_text_mode_reads_calls_from_the_reply_and_feeds_results_back_as_text() {
    let ran = Ran::default();
    let inner = Scripted::new([
        text(
            "Let me look.\n```json\n{\"name\": \"lookup_pet\", \"arguments\": {\"name\": \"Rex\"}}\n```",
        ),
        text(
            "{\"name\": \"lookup_pet\", \"arguments\": {}} or {\"name\": \"transfer\", \"arguments\": {}}",
        ),
        text("Rex is a dog."),
    ]);
    let agent = Agent::builder(builder(&ran).build().unwrap(), FreeText::new(inner.clone()))
        .system("Be kind.")
        .build();
    let run = agent.run(&customer(), "What is Rex?").await.unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
    assert_eq!(run.calls()[0].tool, "lookup_pet");
    assert!(run.calls()[0].result.is_ok());

    let seen = inner.seen();
    // No native tools; they are described in the system prompt.
    assert!(seen[0].tools.is_empty());
    let system = seen[0].system.clone().unwrap();
    assert!(system.starts_with("Be kind."));
    assert!(
        system.contains("- lookup_pet: Look up a pet by name."),
        "{system}"
    );
    assert!(!system.contains("delete_everything"));
    // The result came back as text, the call as the JSON the model wrote.
    let Some(Message::User { text: result }) = seen[1].messages.last() else {
        panic!()
    };
    assert!(result.starts_with("Result of lookup_pet: {"), "{result}");
    assert!(matches!(&seen[1].messages[1], Message::Assistant { calls, .. } if calls.is_empty()));
    // Two candidates in one reply are not guessed at: the model is told and asked again.
    let Some(Message::User { text: correction }) = seen[2].messages.last() else {
        panic!()
    };
    assert!(correction.contains("could not be read"), "{correction}");
}

#[tokio::test]
async fn examples_come_before_every_conversation_and_only_with_tools_the_caller_is_offered() {
    use toolgate::agent::Example;
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("c1", "lookup_pet", r#"{"name": "Rex"}"#)]),
        text("Rex is a dog."),
    ]);
    let agent = Agent::builder(builder(&ran).build().unwrap(), model.clone())
        .example(
            Example::new("What is Tom?")
                .call(
                    "lookup_pet",
                    json!({"name": "Tom"}),
                    json!({"pet": "Tom", "species": "cat"}),
                )
                .answer("Tom is a cat."),
        )
        // The customer may not see this tool: the example is never shown to it.
        .example(
            Example::new("Wipe it all")
                .call("delete_everything", json!({}), json!("deleted"))
                .answer("Done."),
        )
        .example(Example::new("Hello").answer("Hello! How can I help?"))
        .build();
    let run = agent.run(&customer(), "What is Rex?").await.unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));

    let seen = model.seen();
    for turn in &seen {
        let shown = format!("{:?}", turn.messages);
        assert!(!shown.contains("delete_everything") && !shown.contains("Wipe it all"));
        match &turn.messages[..5] {
            [
                Message::User { text: first },
                Message::Assistant { calls, .. },
                Message::ToolResults { results },
                Message::Assistant {
                    text: Some(answer), ..
                },
                Message::User { text: second },
            ] => {
                assert_eq!(first, "What is Tom?");
                assert_eq!(
                    (calls[0].name.as_str(), calls[0].id.as_str()),
                    ("lookup_pet", "example_1_0")
                );
                assert_eq!(results[0].call_id, "example_1_0");
                assert_eq!(answer, "Tom is a cat.");
                assert_eq!(second, "Hello");
            }
            other => panic!("the examples come first: {other:?}"),
        }
        assert!(matches!(&turn.messages[6], Message::User { text } if text == "What is Rex?"));
    }
    // Never part of the run.
    assert!(matches!(&run.transcript()[0], Message::User { text } if text == "What is Rex?"));
    assert_eq!(run.calls().len(), 1);
}
