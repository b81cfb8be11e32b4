//! A run goes on with the authority of the caller presenting now, never with the one it
//! was started with: a follow-up or a resume by its owner whose role was lowered since sees
//! and runs only the tools of the role it has now.

mod agent;

use agent::{Ran, Scripted, builder, calls, last_results, text};
use toolgate::agent::{Agent, CallDecision, RunOptions, RunStatus};
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
