//! A run goes on with the authority of the caller presenting now, never with the one it
//! was started with: a follow-up or a resume by its owner whose role was lowered since sees
//! and runs only the tools of the role it has now; an approver decides calls but never
//! drives nor reads the run; to a stranger a run does not exist.

mod agent;

use agent::{Ran, Scripted, builder, calls, last_results, text};
use toolgate::agent::{Agent, AgentError, CallDecision, RunId, RunOptions, RunStatus};
use toolgate::audit::MemoryAuditStore;
use toolgate::{Caller, ErrorCode};

fn agent(ran: &Ran, model: Scripted) -> Agent {
    Agent::builder(builder(ran).build().unwrap(), model).build()
}

#[tokio::test]
async fn a_follow_up_runs_with_the_role_its_owner_has_now() {
    let ran = Ran::default();
    let model = Scripted::new([
        text("Hello, admin."),
        calls(&[("wipe", "delete_everything", "{}")]),
        text("I could not."),
    ]);
    let agent = agent(&ran, model.clone());
    let as_admin = Caller::new("ada", "admin");
    let run = agent.run(&as_admin, "hi").await.unwrap();
    assert!(
        model.seen()[0]
            .tools
            .contains(&"delete_everything".to_owned())
    );

    // Her role was lowered since: the run goes on as who she is now.
    let as_public = Caller::new("ada", "public");
    let options = RunOptions::default();
    let run = agent
        .follow_up(&as_public, run.id(), "delete everything", options)
        .await
        .unwrap();
    let seen = model.seen();
    assert_eq!(
        seen[1].tools,
        ["lookup_pet"],
        "only the public tools are offered"
    );
    let results = last_results(&seen[2]);
    let error = results[0].1.as_ref().unwrap_err();
    assert_eq!(error.code, ErrorCode::UnknownTool, "{error:?}");
    assert_eq!(run.text(), Some("I could not."));
    assert_eq!(run.caller().role(), "public");
}

#[tokio::test]
async fn an_owner_resuming_with_a_lowered_role_goes_on_with_that_role() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("pay", "transfer", r#"{"amount": 5, "to": "clinic"}"#)]),
        calls(&[("again", "transfer", r#"{"amount": 5, "to": "clinic"}"#)]),
        text("Done."),
    ]);
    let agent = agent(&ran, model.clone());
    let customer = Caller::new("cust-9", "customer");
    let run = agent.run(&customer, "pay").await.unwrap();
    assert!(matches!(run.status(), RunStatus::NeedsApproval { .. }));
    let staff = Caller::new("dr-lee", "staff");
    let pending = agent.registry().pending_approvals(&staff).await.unwrap();
    agent
        .registry()
        .deny(&pending[0].ticket, &staff, "not today")
        .await
        .unwrap();

    // The owner, now only public, takes the run up again: the next turn is hers as she is.
    let lowered = Caller::new("cust-9", "public");
    let run = agent
        .resume(&lowered, run.id(), Vec::<CallDecision>::new())
        .await
        .unwrap();
    let seen = model.seen();
    assert_eq!(seen[1].tools, ["lookup_pet"]);
    let results = last_results(&seen[2]);
    assert_eq!(
        results[0].1.as_ref().unwrap_err().code,
        ErrorCode::UnknownTool
    );
    assert_eq!(ran.transfers(), 0);
    assert_eq!(run.text(), Some("Done."));
}

#[tokio::test]
async fn a_call_waiting_for_a_tool_its_owner_no_longer_sees_is_withdrawn() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("pay", "transfer", r#"{"amount": 5, "to": "clinic"}"#)]),
        text("It could not be done."),
    ]);
    let registry = builder(&ran)
        .audit_store(MemoryAuditStore::new(16))
        .build()
        .unwrap();
    let agent = Agent::builder(registry, model.clone()).build();
    let customer = Caller::new("cust-3", "customer");
    let run = agent.run(&customer, "pay").await.unwrap();
    let ticket = run.pending()[0].ticket.clone();

    // Before anyone decides, the owner comes back as public: the call is no longer hers.
    let lowered = Caller::new("cust-3", "public");
    let run = agent
        .resume(&lowered, run.id(), Vec::<CallDecision>::new())
        .await
        .unwrap();
    let results = last_results(&model.seen()[1]);
    let error = results[0].1.as_ref().unwrap_err();
    assert_eq!(error.code, ErrorCode::UnknownTool, "{error:?}");
    assert_eq!(run.text(), Some("It could not be done."));

    // No approver can run it any more, by any route.
    let staff = Caller::new("dr-lee", "staff");
    assert!(agent.registry().approve(&ticket, &staff).await.is_err());
    assert!(
        agent
            .registry()
            .pending_approvals(&staff)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(ran.transfers(), 0);
    let audit = agent.registry().history("cust-3", 10).await.unwrap();
    assert!(
        audit.iter().any(|record| record.decision == "withdrawn"),
        "{audit:?}"
    );
}

#[tokio::test]
async fn an_approver_decides_but_never_drives_the_run_nor_reads_it() {
    let ran = Ran::default();
    let model = Scripted::new([
        calls(&[("pay", "transfer", r#"{"amount": 5, "to": "clinic"}"#)]),
        text("Paid, as the customer asked."),
    ]);
    let agent = agent(&ran, model.clone());
    let customer = Caller::new("cust-4", "customer");
    let run = agent.run(&customer, "pay").await.unwrap();
    let staff = Caller::new("dr-lee", "staff");

    // Resuming is the owner's: to the approver there is no such run to go on with.
    let resumed = agent
        .resume(&staff, run.id(), [CallDecision::approve("pay")])
        .await;
    assert_eq!(resumed.unwrap_err(), AgentError::RunNotFound);
    assert!(agent.get(&staff, run.id()).await.unwrap().is_none());
    assert_eq!(ran.transfers(), 0);

    let decided = agent
        .decide(&staff, run.id(), [CallDecision::approve("pay")])
        .await
        .unwrap();
    assert_eq!(ran.transfers(), 1);
    assert_eq!(decided.still_waiting, 0);
    assert_eq!(model.seen().len(), 1, "no model turn ran for the approver");

    // The owner, as it presents now, goes on.
    let run = agent
        .resume(&customer, run.id(), Vec::<CallDecision>::new())
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Paid, as the customer asked."));
    assert_eq!(run.caller().id(), "cust-4");
    assert_eq!(ran.transfers(), 1);
}

#[tokio::test]
async fn to_a_stranger_a_run_answers_exactly_as_a_missing_one() {
    let ran = Ran::default();
    let model = Scripted::new([calls(&[(
        "pay",
        "transfer",
        r#"{"amount": 5, "to": "clinic"}"#,
    )])]);
    let agent = agent(&ran, model);
    let customer = Caller::new("cust-5", "customer");
    let run = agent.run(&customer, "pay").await.unwrap();
    let missing = RunId::from("0123456789abcdef0123456789abcdef");
    // An id no store can look up (PostgreSQL refuses NUL) is a missing run too.
    let unstorable = RunId::from(format!("{}\0", run.id()));
    let strangers = [
        Caller::new("cust-6", "customer"),
        Caller::new("visitor", "public"),
    ];
    for stranger in &strangers {
        for id in [run.id(), &missing, &unstorable] {
            for decisions in [
                vec![CallDecision::approve("pay")],
                vec![CallDecision::approve("no-such-call")],
                vec![CallDecision::deny("pay", "mine now")],
                vec![],
            ] {
                let decided = agent.decide(stranger, id, decisions.clone()).await;
                assert_eq!(decided.unwrap_err(), AgentError::RunNotFound);
                let resumed = agent.resume(stranger, id, decisions).await;
                assert_eq!(resumed.unwrap_err(), AgentError::RunNotFound);
            }
            let followed = agent
                .follow_up(stranger, id, "hi", RunOptions::default())
                .await;
            assert_eq!(followed.unwrap_err(), AgentError::RunNotFound);
        }
    }
    assert_eq!(ran.transfers(), 0);
    assert_eq!(
        agent
            .get(&customer, run.id())
            .await
            .unwrap()
            .unwrap()
            .pending()
            .len(),
        1,
        "the run still waits, untouched"
    );
}
