//! Budgets on tokens, money and tool calls, per run and per caller per period: a spent
//! budget stops the run with its own status, an event and an audit record; parallel
//! requests for the last unit let exactly one through. (Across instances on one database:
//! `store_suite`, run on SQLite and PostgreSQL.)

mod agent;

use std::sync::Arc;
use std::time::Duration;

use agent::{Ran, Scripted, builder, calls, text};
use serde_json::json;
use toolgate::agent::{Agent, Model, ModelFuture, ModelReply, ModelRequest, RunStatus};
use toolgate::budget::{Budget, BudgetExhausted, Price, Prices};
use toolgate::events::EventKind;
use toolgate::store::MemoryAuditStore;
use toolgate::{Caller, ErrorCode, Registry, ToolCall};

const DAY: Duration = Duration::from_secs(86_400);

fn customer() -> Caller {
    Caller::new("cust-1", "customer")
}

/// A reply as a provider reports it: with the tokens it used.
fn used(mut reply: ModelReply, input: u64, output: u64) -> ModelReply {
    reply.usage.input_tokens = input;
    reply.usage.output_tokens = output;
    reply
}

/// The scripted model under a name, for the price table.
struct Named(Scripted, &'static str);

impl Model for Named {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        self.0.respond(request)
    }
    fn model_name(&self) -> Option<&str> {
        Some(self.1)
    }
}

fn lookup(id: &str) -> ModelReply {
    let arguments = format!(r#"{{"name": "pet {id}"}}"#);
    calls(&[(id, "lookup_pet", &arguments)])
}

#[tokio::test]
async fn a_run_stops_at_its_token_budget_with_the_status_an_event_and_a_record() {
    let ran = Ran::default();
    let registry = builder(&ran)
        .budget(Budget::tokens(1_000))
        .audit_store(MemoryAuditStore::new(100))
        .build()
        .unwrap();
    let mut events = registry.events();
    // Each turn calls a tool and uses 600 tokens: the second turn passes its ceiling, the
    // third is not asked.
    let model = Scripted::new([
        used(lookup("c1"), 500, 100),
        used(lookup("c2"), 500, 100),
        used(text("never asked"), 1, 1),
    ]);
    let agent = Agent::builder(registry.clone(), model.clone()).build();
    let run = agent.run(&customer(), "Tell me about Rex").await.unwrap();

    let stopped = RunStatus::BudgetExhausted {
        budget: "tokens_per_run".into(),
        used: 1_200.0,
        limit: 1_000.0,
    };
    assert_eq!(run.status(), &stopped);
    assert_eq!(run.status().name(), "budget_exhausted");
    assert_eq!(model.seen().len(), 2, "the third request was never sent");
    assert_eq!(ran.lookups.load(std::sync::atomic::Ordering::SeqCst), 2);

    let mut kinds = Vec::new();
    while let Ok(event) = events.try_recv() {
        kinds.push(event.kind.clone());
    }
    assert!(kinds.iter().any(|kind| matches!(kind,
        EventKind::BudgetExhausted { budget, used, limit }
            if budget == "tokens_per_run" && *used == 1_200.0 && *limit == 1_000.0)));
    let Some(EventKind::RunFinished { status }) = kinds.last() else {
        panic!("the run's end is the last event: {kinds:?}");
    };
    assert_eq!(status["status"], "budget_exhausted");

    let history = registry.history("cust-1", 10).await.unwrap();
    let record = history
        .iter()
        .find(|record| record.outcome == "budget_exhausted")
        .expect("the stop is recorded");
    assert_eq!(record.tool, "(model request)");
    assert_eq!(record.decision, "budget_exhausted");
    assert_eq!(record.call_id, format!("{}/turn-3", run.id()));
    assert_eq!(record.arguments["budget"], "tokens_per_run");
    assert_eq!(record.arguments["used"], 1_200.0);
}

#[tokio::test]
async fn a_callers_cost_budget_holds_across_runs_and_other_callers_keep_theirs() {
    let registry = builder(&Ran::default())
        .budget(Budget::cost(0.01).per_caller(DAY))
        .prices(Prices::new().model("gpt-test", Price::per_million_tokens(2.0, 8.0)))
        .build()
        .unwrap();
    // 2,000 in at 2.00/M and 500 out at 8.00/M: 0.004 + 0.004 = 0.008 a reply.
    let reply = || used(text("Rex is a dog."), 2_000, 500);
    let model = Scripted::new([reply(), reply(), reply(), reply()]);
    let agent = Agent::builder(registry, Named(model.clone(), "gpt-test")).build();

    let first = agent.run(&customer(), "What is Rex?").await.unwrap();
    assert_eq!(first.text(), Some("Rex is a dog."));
    // 0.008 of 0.01 used: the next request may still go.
    let second = agent.run(&customer(), "And Bella?").await.unwrap();
    assert_eq!(second.text(), Some("Rex is a dog."));
    let third = agent.run(&customer(), "And Max?").await.unwrap();
    assert_eq!(
        third.status(),
        &RunStatus::BudgetExhausted {
            budget: "cost_per_caller_per_1d".into(),
            used: 0.016,
            limit: 0.01,
        }
    );
    // Another caller's budget is its own.
    let other = agent
        .run(&Caller::new("cust-2", "customer"), "What is Rex?")
        .await
        .unwrap();
    assert_eq!(other.text(), Some("Rex is a dog."));
    assert_eq!(model.seen().len(), 3);
}

#[tokio::test]
async fn a_cost_budget_with_an_unpriced_model_stops_the_run_and_says_how_to_fix_it() {
    let registry = builder(&Ran::default())
        .budget(Budget::cost(1.0))
        .prices(Prices::new().model("gpt-test", Price::per_million_tokens(1.0, 1.0)))
        .build()
        .unwrap();
    let model = Scripted::new([text("never asked")]);
    let agent = Agent::builder(registry, Named(model.clone(), "local-llama")).build();
    let run = agent.run(&customer(), "Hi").await.unwrap();
    let RunStatus::Stopped { stage, reason } = run.status() else {
        panic!("{:?}", run.status());
    };
    assert_eq!(stage, "budgets");
    assert!(reason.contains("`local-llama` has no price"), "{reason}");
    assert!(reason.contains("RegistryBuilder::prices"), "{reason}");
    assert!(model.seen().is_empty());
}

#[tokio::test]
async fn a_tool_call_budget_counts_calls_that_run_and_refuses_the_rest_with_the_budget() {
    let registry = builder(&Ran::default())
        .budget(Budget::tool_calls(2).per_caller(DAY))
        .audit_store(MemoryAuditStore::new(100))
        .build()
        .unwrap();
    let mut events = registry.events();
    let call = |id: &str, name: &str| ToolCall::new(id, name, json!({"name": "Rex"}));
    // A call refused before it runs (invalid arguments, a tool above the role) is free.
    let refused = registry
        .call(&customer(), ToolCall::new("x1", "lookup_pet", json!({})))
        .await;
    assert_eq!(
        refused.result.unwrap_err().code,
        ErrorCode::InvalidArguments
    );
    let hidden = registry
        .call(&customer(), call("x2", "delete_everything"))
        .await;
    assert_eq!(hidden.result.unwrap_err().code, ErrorCode::UnknownTool);
    for id in ["c1", "c2"] {
        assert!(
            registry
                .call(&customer(), call(id, "lookup_pet"))
                .await
                .result
                .is_ok()
        );
    }
    let error = registry
        .call(&customer(), call("c3", "lookup_pet"))
        .await
        .result
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::BudgetExhausted);
    assert!(
        error.message.contains("tool_calls_per_caller_per_1d"),
        "{}",
        error.message
    );
    assert_eq!(
        BudgetExhausted::from_error(&error),
        Some(BudgetExhausted {
            budget: "tool_calls_per_caller_per_1d".into(),
            used: 2.0,
            limit: 2.0,
        })
    );
    let mut spent = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let EventKind::BudgetExhausted {
            budget,
            used,
            limit,
        } = &event.kind
        {
            spent.push((event.caller.clone(), budget.clone(), *used, *limit));
        }
    }
    let expected = (
        "cust-1".to_owned(),
        "tool_calls_per_caller_per_1d".to_owned(),
        2.0,
        2.0,
    );
    assert_eq!(spent, [expected], "one event, for the refused call");
    let history = registry.history("cust-1", 10).await.unwrap();
    let record = history
        .iter()
        .find(|record| record.call_id == "c3")
        .unwrap();
    assert_eq!(record.outcome, "budget_exhausted");
    // A dry run is not a call that runs.
    let options = toolgate::CallOptions {
        dry_run: true,
        ..Default::default()
    };
    let dry = registry
        .call_with(&customer(), call("d1", "lookup_pet"), options)
        .await;
    assert!(dry.result.is_ok(), "{:?}", dry.result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_racing_for_the_last_units_let_exactly_that_many_through() {
    let registry: Registry = builder(&Ran::default())
        .budget(Budget::tool_calls(5).per_caller(DAY))
        .build()
        .unwrap();
    let registry = Arc::new(registry);
    let racing = (0..40).map(|index| {
        let registry = Arc::clone(&registry);
        tokio::spawn(async move {
            let call = ToolCall::new(format!("r{index}"), "lookup_pet", json!({"name": "Rex"}));
            registry.call(&customer(), call).await.result
        })
    });
    let results = futures::future::join_all(racing).await;
    let passed = results
        .iter()
        .filter(|result| result.as_ref().unwrap().is_ok())
        .count();
    assert_eq!(passed, 5);
    for result in results {
        if let Err(error) = result.unwrap() {
            assert_eq!(error.code, ErrorCode::BudgetExhausted);
        }
    }
}

#[tokio::test]
async fn a_runs_tool_call_budget_stops_the_run_after_the_turn_that_reached_it() {
    let ran = Ran::default();
    let registry = builder(&ran)
        .budget(Budget::tool_calls(2).named("three_lookups_max"))
        .build()
        .unwrap();
    let model = Scripted::new([
        calls(&[
            ("c1", "lookup_pet", r#"{"name": "Rex"}"#),
            ("c2", "lookup_pet", r#"{"name": "Bella"}"#),
            ("c3", "lookup_pet", r#"{"name": "Max"}"#),
        ]),
        text("never asked"),
    ]);
    let agent = Agent::builder(registry.clone(), model.clone()).build();
    let run = agent.run(&customer(), "Look them all up").await.unwrap();
    assert_eq!(
        run.status(),
        &RunStatus::BudgetExhausted {
            budget: "three_lookups_max".into(),
            used: 2.0,
            limit: 2.0,
        }
    );
    assert_eq!(ran.lookups.load(std::sync::atomic::Ordering::SeqCst), 2);
    // Each run has its own count: a new run may call again.
    let model = Scripted::new([lookup("d1"), text("Rex is a dog.")]);
    let agent = Agent::builder(registry, model).build();
    let run = agent.run(&customer(), "What is Rex?").await.unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
}
