//! A workflow whose step needs a person's approval waits with the step's ticket and goes on
//! once it is decided, wherever that is: each waiting item in turn, each step once; a
//! refusal stops it or is passed over as the step says; a workflow inside a workflow goes
//! on outward; the state survives in a SQLite file decided by another registry; the agent
//! loop's run waits for each ticket and gets the workflow's result; over MCP (rmcp's
//! client) the call waits the same way.

mod agent;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent::{Scripted, calls, last_results, text};
use serde_json::{Value, json};
use toolgate::agent::{Agent, RunStatus};
use toolgate::approval::TicketError;
use toolgate::store::Stores;
use toolgate::workflow::{Step, Workflow};
use toolgate::{Caller, ErrorCode, FnTool, Registry, ToolCall, ToolDefinition, ToolError};

/// What the tools did.
#[derive(Default, Clone)]
struct Done {
    wiped: Arc<Mutex<Vec<String>>>,
    notified: Arc<AtomicUsize>,
}

fn definition(name: &str, schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, format!("The tool {name}."), "public", schema)
}

/// `rooms` lists two rooms, `wipe` (destructive: a public caller's call waits for staff)
/// wipes one, `notify` counts; the workflows `clean_rooms` (rooms → wipe each → notify),
/// `clean_one` (wipe "hall") and `clean_twice` (clean_one, then notify).
fn registry(done: &Done, stores: Option<&Stores>) -> Registry {
    let mut builder = Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .approval_key(b"the same key on every instance".to_vec());
    if let Some(stores) = stores {
        builder = builder.stores(stores);
    }
    let registry = builder.build().unwrap();
    let any = json!({"type": "object"});
    let rooms = FnTool::new(definition("rooms", any.clone()), |_, _| async {
        Ok(json!({"rooms": ["kitchen", "attic"]}))
    });
    registry.register(rooms).unwrap();
    let room =
        json!({"type": "object", "properties": {"room": {"type": "string"}}, "required": ["room"]});
    let mut wipe = definition("wipe", room);
    wipe.hints.destructive = true;
    let wiped = Arc::clone(&done.wiped);
    let wipe = FnTool::new(wipe, move |_, arguments| {
        let wiped = Arc::clone(&wiped);
        async move {
            let room = arguments["room"].as_str().unwrap_or_default().to_owned();
            wiped.lock().unwrap().push(room.clone());
            Ok(json!(format!("{room} wiped")))
        }
    });
    registry.register(wipe).unwrap();
    let notified = Arc::clone(&done.notified);
    let notify = FnTool::new(definition("notify", any.clone()), move |_, arguments| {
        let notified = Arc::clone(&notified);
        async move {
            notified.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"told": arguments}))
        }
    });
    registry.register(notify).unwrap();
    for workflow in workflows() {
        registry
            .register(workflow.tool_for(&registry).unwrap())
            .unwrap();
    }
    registry
}

fn workflows() -> Vec<Workflow> {
    let any = || json!({"type": "object"});
    let rooms = Workflow::new(
        definition("clean_rooms", any()),
        vec![
            Step::new("rooms", "rooms", json!({})),
            Step::new("wipe", "wipe", json!({"room": "${item}"})).for_each("${steps.rooms.rooms}"),
            Step::new("notify", "notify", json!({"wiped": "${steps.wipe}"})),
        ],
    );
    let one = Workflow::new(
        definition("clean_one", any()),
        vec![Step::new("wipe", "wipe", json!({"room": "hall"}))],
    );
    vec![rooms, one]
}

/// `clean_twice` calls `clean_one`: registered once `clean_one` is.
fn nested(registry: &Registry) {
    let workflow = Workflow::new(
        definition("clean_twice", json!({"type": "object"})),
        vec![
            Step::new("inner", "clean_one", json!({})),
            Step::new(
                "notify",
                "notify",
                json!({"inner": "${steps.inner.output}"}),
            ),
        ],
    );
    registry
        .register(workflow.tool_for(registry).unwrap())
        .unwrap();
}

fn ann() -> Caller {
    Caller::new("ann", "public")
}

fn staff() -> Caller {
    Caller::new("bo", "staff")
}

/// The ticket a waiting outcome carries.
fn ticket(result: &Result<Value, ToolError>) -> String {
    let error = result.as_ref().unwrap_err();
    assert_eq!(error.code, ErrorCode::ApprovalRequired, "{error:?}");
    let details = error.details.as_ref().unwrap();
    assert!(details["ticket_id"].is_string() && details["expires"].is_u64());
    details["ticket"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_waiting_item_pauses_the_workflow_and_it_goes_on_once_after_each_decision() {
    let done = Done::default();
    let registry = registry(&done, None);
    let call = ToolCall::new("w1", "clean_rooms", "{}");
    let first = registry.call(&ann(), call).await;
    let kitchen = ticket(&first.result);
    assert!(done.wiped.lock().unwrap().is_empty(), "nothing ran yet");

    // Approved: the kitchen is wiped, and the workflow waits again, at the attic.
    let went_on = registry.approve(&kitchen, &staff()).await.unwrap();
    assert_eq!(went_on.call_id, "w1", "the outcome is the workflow's call");
    assert_eq!(went_on.tool, "clean_rooms");
    let attic = ticket(&went_on.result);
    assert_eq!(*done.wiped.lock().unwrap(), ["kitchen"]);
    assert_eq!(done.notified.load(Ordering::SeqCst), 0);

    let ended = registry.approve(&attic, &staff()).await.unwrap();
    let result = ended.result.unwrap();
    assert_eq!(*done.wiped.lock().unwrap(), ["kitchen", "attic"]);
    assert_eq!(
        done.notified.load(Ordering::SeqCst),
        1,
        "later steps run once"
    );
    assert_eq!(
        result["output"],
        json!({"told": {"wiped": ["kitchen wiped", "attic wiped"]}})
    );
    let statuses: Vec<&str> = result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ok", "ok", "ok", "ok"]);

    // Spent tickets run nothing again.
    for spent in [&kitchen, &attic] {
        let again = registry.approve(spent, &staff()).await.unwrap_err();
        assert_eq!(again, TicketError::AlreadyUsed);
    }
    assert_eq!(done.wiped.lock().unwrap().len(), 2);
    assert_eq!(done.notified.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_step_stops_the_workflow_unless_it_goes_on_after_failures() {
    let done = Done::default();
    let registry = registry(&done, None);
    let waiting = registry
        .call(&ann(), ToolCall::new("w2", "clean_one", "{}"))
        .await;
    let refused = registry
        .deny(&ticket(&waiting.result), &staff(), "not today")
        .await
        .unwrap();
    let error = refused.result.unwrap_err();
    assert_eq!(
        (refused.call_id.as_str(), &error.code),
        ("w2", &ErrorCode::ApprovalDenied)
    );
    assert!(error.message.contains("not today"), "{}", error.message);

    let tolerant = Workflow::new(
        definition("try_clean", json!({"type": "object"})),
        vec![
            Step::new("wipe", "wipe", json!({"room": "hall"})).continue_on_error(),
            Step::new("notify", "notify", json!({})),
        ],
    );
    registry
        .register(tolerant.tool_for(&registry).unwrap())
        .unwrap();
    let waiting = registry
        .call(&ann(), ToolCall::new("w3", "try_clean", "{}"))
        .await;
    let went_on = registry
        .deny(&ticket(&waiting.result), &staff(), "no")
        .await
        .unwrap();
    let result = went_on.result.unwrap();
    assert_eq!(result["steps"][0]["status"], "failed");
    assert_eq!(result["steps"][0]["error"]["code"], "approval_denied");
    assert_eq!(result["steps"][1]["status"], "ok");
    assert!(done.wiped.lock().unwrap().is_empty());
    assert_eq!(done.notified.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_inside_a_workflow_goes_on_outward_and_each_end_is_recorded() {
    let done = Done::default();
    let stores = Stores::open("memory").await.unwrap();
    let registry = registry(&done, Some(&stores));
    nested(&registry);
    let waiting = registry
        .call(&ann(), ToolCall::new("w4", "clean_twice", "{}"))
        .await;
    let ended = registry
        .approve(&ticket(&waiting.result), &staff())
        .await
        .unwrap();
    assert_eq!(ended.call_id, "w4");
    let result = ended.result.unwrap();
    assert_eq!(result["output"], json!({"told": {"inner": "hall wiped"}}));
    assert_eq!(done.notified.load(Ordering::SeqCst), 1);

    let records = registry.history("ann", 50).await.unwrap();
    let resumed: Vec<(&str, &str)> = records
        .iter()
        .filter(|record| record.decision == "resumed")
        .map(|record| (record.call_id.as_str(), record.outcome.as_str()))
        .collect();
    assert_eq!(
        resumed,
        [("w4", "ok"), ("w4/inner.0", "ok")],
        "newest first: the inner workflow's end, then the outer's"
    );
    let approved = records
        .iter()
        .find(|record| record.call_id == "w4/inner.0/wipe.0" && record.decision == "approved")
        .expect("the step itself is recorded as approved");
    assert_eq!(approved.approver.as_deref(), Some("bo"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_registry_on_the_same_sqlite_file_decides_and_the_workflow_goes_on_there() {
    let folder = tempfile::tempdir().unwrap();
    let address = format!("sqlite:{}", folder.path().join("state.db").display());
    let (here, there) = (Done::default(), Done::default());
    let a = registry(&here, Some(&Stores::open(&address).await.unwrap()));
    let b = registry(&there, Some(&Stores::open(&address).await.unwrap()));
    let waiting = a
        .call(&ann(), ToolCall::new("w5", "clean_rooms", "{}"))
        .await;
    let attic = ticket(
        &b.approve(&ticket(&waiting.result), &staff())
            .await
            .unwrap()
            .result,
    );
    let ended = a.approve(&attic, &staff()).await.unwrap();
    assert_eq!(
        ended.result.unwrap()["output"]["told"]["wiped"],
        json!(["kitchen wiped", "attic wiped"])
    );
    assert_eq!(*there.wiped.lock().unwrap(), ["kitchen"]);
    assert_eq!(*here.wiped.lock().unwrap(), ["attic"]);
    assert_eq!(here.notified.load(Ordering::SeqCst), 1);
    assert!(!Path::new(&folder.path().join("nothing")).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_waits_for_each_ticket_and_the_model_reads_the_workflows_result() {
    let done = Done::default();
    let registry = registry(&done, None);
    let model = Scripted::new([
        calls(&[("c1", "clean_rooms", "{}")]),
        text("Both rooms are clean."),
    ]);
    let agent = Agent::builder(registry.clone(), model.clone()).build();
    let run = agent.run(&ann(), "clean the rooms").await.unwrap();
    for room in ["kitchen", "attic"] {
        let RunStatus::NeedsApproval { pending } = run_status(&agent, &run).await else {
            panic!("the run waits for the {room}");
        };
        assert_eq!(
            (pending.len(), pending[0].call_id.as_str()),
            (1, "c1"),
            "the model's call waits"
        );
        let decided = agent
            .decide(
                &staff(),
                run.id(),
                [toolgate::agent::CallDecision::approve("c1")],
            )
            .await
            .unwrap();
        assert_eq!(decided.outcomes.len(), 1);
    }
    assert_eq!(model.seen().len(), 1, "the model waits for the owner");
    let run = agent.resume(&ann(), run.id(), []).await.unwrap();
    assert_eq!(run.text(), Some("Both rooms are clean."));
    let (id, result) = last_results(&model.seen()[1]).remove(0);
    assert_eq!(id, "c1");
    assert_eq!(
        result.unwrap()["output"]["told"]["wiped"],
        json!(["kitchen wiped", "attic wiped"])
    );
    assert_eq!(done.notified.load(Ordering::SeqCst), 1);
}

async fn run_status(agent: &Agent, run: &toolgate::agent::Run) -> RunStatus {
    let stored = agent.get(&ann(), run.id()).await.unwrap().unwrap();
    stored.status().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_mcp_a_workflow_runs_and_a_waiting_one_answers_with_its_ticket() {
    let done = Done::default();
    let registry = registry(&done, None);
    let server = toolgate::mcp::McpServer::for_caller(registry.clone(), ann());
    let client = toolgate_tests::connect_in_memory(server, ()).await;
    let listed = client.peer().list_all_tools().await.unwrap();
    assert!(listed.iter().any(|tool| tool.name == "clean_rooms"));
    let arguments = serde_json::Map::new();
    let answer = client
        .peer()
        .call_tool(rmcp::model::CallToolRequestParams::new("clean_rooms").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(answer.is_error, Some(true));
    let said = serde_json::to_string(&answer.content).unwrap();
    assert!(said.contains("waits for approval"), "{said}");
    let pending = registry.pending_approvals(&staff()).await.unwrap();
    assert_eq!(pending.len(), 1);
    let attic = ticket(
        &registry
            .approve(&pending[0].ticket, &staff())
            .await
            .unwrap()
            .result,
    );
    let ended = registry.approve(&attic, &staff()).await.unwrap();
    assert!(ended.result.is_ok());
    assert_eq!(done.wiped.lock().unwrap().len(), 2);
}
