//! Workflows: the news → tasks chain against a loopback search server; every step runs as
//! the workflow's caller (a step of a tool it may not see fails as an unknown tool does, a
//! step needing approval makes the workflow wait with its ticket); each failure mode; what is
//! refused before registering; a workflow called by the agent loop and over HTTP; the same
//! workflow from a tool file and from code.

mod agent;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use agent::{Scripted, calls, text};
use serde_json::{Value, json};
use toolgate::agent::Agent;
use toolgate::http::{HttpOptions, router};
use toolgate::workflow::{Step, Workflow, WorkflowProblem};
use toolgate::{Caller, ErrorCode, FnTool, Registry, ToolCall, ToolDefinition, ToolError};

/// A news search on 127.0.0.1 answering `{"results": [{"title"}, ...]}` for `?q=`.
async fn search_server() -> String {
    let app = axum::Router::new().route(
        "/search",
        axum::routing::get(
            |axum::extract::Query(q): axum::extract::Query<
                std::collections::HashMap<String, String>,
            >| async move {
                let topic = q.get("q").cloned().unwrap_or_default();
                axum::Json(json!({"results": [
                    {"title": format!("{topic} model released")},
                    {"title": format!("{topic} chip shortage")},
                    {"title": format!("{topic} rules passed")},
                ]}))
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn definition(name: &str, permission: &str, schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, format!("The tool {name}."), permission, schema)
}

/// `web_search` (public, the loopback server), `create_task` (public, kept in `tasks`),
/// `fail` (public, always fails), `payroll` (staff), `wipe` (public, destructive).
async fn registry(tasks: Arc<Mutex<Vec<String>>>) -> Registry {
    let base = search_server().await;
    let registry = Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .build()
        .unwrap();
    let query = json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"], "additionalProperties": false});
    registry
        .register(FnTool::new(
            definition("web_search", "public", query),
            move |_, arguments| {
                let url = format!(
                    "{base}/search?q={}",
                    arguments["query"].as_str().unwrap_or_default()
                );
                async move {
                    let answer = reqwest::get(url)
                        .await
                        .map_err(|e| ToolError::execution(e.to_string()))?;
                    answer
                        .json::<Value>()
                        .await
                        .map_err(|e| ToolError::execution(e.to_string()))
                }
            },
        ))
        .unwrap();
    let title = json!({"type": "object", "properties": {"title": {"type": "string", "minLength": 1}}, "required": ["title"], "additionalProperties": false});
    registry
        .register(FnTool::new(
            definition("create_task", "public", title),
            move |_, arguments| {
                let tasks = Arc::clone(&tasks);
                async move {
                    let title = arguments["title"].as_str().unwrap_or_default().to_owned();
                    tasks.lock().unwrap().push(title.clone());
                    Ok(json!({"task": title}))
                }
            },
        ))
        .unwrap();
    let any = json!({"type": "object"});
    registry
        .register(FnTool::new(
            definition("fail", "public", any.clone()),
            |_, _| async { Err(ToolError::execution("the backend is down")) },
        ))
        .unwrap();
    registry
        .register(FnTool::new(
            definition("payroll", "staff", any.clone()),
            |_, _| async { Ok(json!("paid")) },
        ))
        .unwrap();
    let mut wipe = definition("wipe", "public", any);
    wipe.hints.destructive = true;
    registry
        .register(FnTool::new(wipe, |_, _| async { Ok(json!("wiped")) }))
        .unwrap();
    registry
}

fn news_to_tasks() -> Workflow {
    let topic = json!({"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]});
    Workflow::new(
        definition("news_to_tasks", "public", topic),
        vec![
            Step::new("search", "web_search", json!({"query": "${params.topic}"})),
            Step::new(
                "tasks",
                "create_task",
                json!({"title": "Follow up: ${item.title}"}),
            )
            .for_each("${steps.search.results}"),
        ],
    )
}

fn one_step(name: &str, step: Step) -> Workflow {
    Workflow::new(
        definition(name, "public", json!({"type": "object"})),
        vec![step],
    )
}

fn public() -> Caller {
    Caller::new("ann", "public")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn news_becomes_tasks_each_step_as_the_caller() {
    let tasks = Arc::new(Mutex::new(Vec::new()));
    let registry = registry(Arc::clone(&tasks)).await;
    registry
        .register(news_to_tasks().tool_for(&registry).unwrap())
        .unwrap();
    let ran = registry
        .call(
            &public(),
            ToolCall::new("w1", "news_to_tasks", json!({"topic": "AI"})),
        )
        .await;
    let result = ran.result.unwrap();
    assert_eq!(result["output"].as_array().unwrap().len(), 3);
    assert_eq!(
        *tasks.lock().unwrap(),
        [
            "Follow up: AI model released",
            "Follow up: AI chip shortage",
            "Follow up: AI rules passed"
        ]
    );
    let statuses: Vec<&str> = result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ok", "ok", "ok", "ok"]);
    // A dry run shows the steps that would run, and runs none.
    let options = toolgate::CallOptions {
        dry_run: true,
        ..Default::default()
    };
    let call = ToolCall::new("d1", "news_to_tasks", json!({"topic": "AI"}));
    let dry = registry
        .call_with(&public(), call, options)
        .await
        .result
        .unwrap();
    assert_eq!(dry["decision"], "allow");
    let planned: Vec<&str> = dry["review"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(planned, ["web_search", "create_task"]);
    assert_eq!(
        dry["review"]["steps"][1]["for_each"],
        "${steps.search.results}"
    );
    assert_eq!(tasks.lock().unwrap().len(), 3, "nothing ran");
    // Each step is a call of its own, audited under the workflow's call id.
    let history = registry.history("ann", 10).await.unwrap();
    let ids: Vec<&str> = history.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "d1",
            "w1",
            "w1/tasks.2",
            "w1/tasks.1",
            "w1/tasks.0",
            "w1/search.0"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_beyond_the_callers_role_fails_as_an_unknown_tool_and_approval_waits_with_its_ticket()
 {
    let registry = registry(Arc::default()).await;
    let payroll = one_step("pay", Step::new("pay", "payroll", json!({})));
    registry
        .register(payroll.tool_for(&registry).unwrap())
        .unwrap();
    let hidden = registry
        .call(&public(), ToolCall::new("1", "pay", "{}"))
        .await
        .result
        .unwrap_err();
    let direct = registry
        .call(&public(), ToolCall::new("2", "payroll", "{}"))
        .await
        .result
        .unwrap_err();
    assert_eq!(hidden.code, ErrorCode::UnknownTool);
    assert_eq!(direct.code, ErrorCode::UnknownTool);
    assert_eq!(
        hidden.details.as_ref().unwrap()["error"]["message"],
        direct.message,
        "said exactly as when the caller calls it itself: as a tool that does not exist"
    );
    let staff = Caller::new("bo", "staff");
    assert_eq!(
        registry
            .call(&staff, ToolCall::new("3", "pay", "{}"))
            .await
            .result
            .unwrap()["output"],
        "paid"
    );

    let wipe = one_step("clean", Step::new("wipe", "wipe", json!({})));
    registry
        .register(wipe.tool_for(&registry).unwrap())
        .unwrap();
    let waiting = registry
        .call(&public(), ToolCall::new("4", "clean", "{}"))
        .await
        .result
        .unwrap_err();
    assert_eq!(waiting.code, ErrorCode::ApprovalRequired);
    let ticket = waiting.details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let decided = registry.approve(&ticket, &staff).await.unwrap();
    assert_eq!(
        decided.result.unwrap()["output"],
        "wiped",
        "the step runs once approved, and the workflow ends with it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_step_stops_the_workflow_or_is_passed_over() {
    let tasks = Arc::new(Mutex::new(Vec::new()));
    let registry = registry(Arc::clone(&tasks)).await;
    let steps = |on_error: fn(Step) -> Step| {
        vec![
            on_error(Step::new("down", "fail", json!({}))),
            Step::new(
                "after",
                "create_task",
                json!({"title": "after the failure"}),
            ),
        ]
    };
    let schema = json!({"type": "object"});
    let stops = Workflow::new(definition("stops", "public", schema.clone()), steps(|s| s));
    let goes_on = Workflow::new(
        definition("goes_on", "public", schema),
        steps(Step::continue_on_error),
    );
    registry
        .register(stops.tool_for(&registry).unwrap())
        .unwrap();
    registry
        .register(goes_on.tool_for(&registry).unwrap())
        .unwrap();
    let stopped = registry
        .call(&public(), ToolCall::new("1", "stops", "{}"))
        .await
        .result
        .unwrap_err();
    assert_eq!(stopped.code, ErrorCode::ExecutionFailed);
    assert!(
        stopped
            .message
            .starts_with("step `down` (fail) failed: the backend is down"),
        "{}",
        stopped.message
    );
    assert!(tasks.lock().unwrap().is_empty());
    let went_on = registry
        .call(&public(), ToolCall::new("2", "goes_on", "{}"))
        .await
        .result
        .unwrap();
    assert_eq!(went_on["steps"][0]["status"], "failed");
    assert_eq!(
        went_on["steps"][0]["error"]["message"],
        "the backend is down"
    );
    assert_eq!(*tasks.lock().unwrap(), ["after the failure"]);
    // A condition that does not hold skips its step.
    let skipping = one_step(
        "skips",
        Step::new("s", "create_task", json!({"title": "x"})).when("${params.go}"),
    );
    registry
        .register(skipping.tool_for(&registry).unwrap())
        .unwrap();
    let skipped = registry
        .call(&public(), ToolCall::new("3", "skips", "{}"))
        .await
        .result
        .unwrap();
    assert_eq!(skipped["steps"][0]["status"], "skipped");
    // A list that is not one is said.
    let not_a_list = one_step(
        "bad_list",
        Step::new("s", "create_task", json!({"title": "${item}"})).for_each("${params.n}"),
    );
    registry
        .register(not_a_list.tool_for(&registry).unwrap())
        .unwrap();
    let said = registry
        .call(&public(), ToolCall::new("4", "bad_list", json!({"n": 3})))
        .await
        .result
        .unwrap_err();
    assert!(
        said.message
            .contains("`for_each` gives a number, not a list"),
        "{}",
        said.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistakes_are_refused_before_registering() {
    let registry = registry(Arc::default()).await;
    let params = json!({"type": "object", "properties": {"topic": {"type": "string"}}});
    let broken = Workflow::new(
        definition("broken", "public", params),
        vec![
            Step::new(
                "a",
                "web_search",
                json!({"query": "${steps.b.x}", "extra": 1}),
            ),
            Step::new("b", "no_such_tool", json!({})),
            Step::new(
                "c",
                "create_task",
                json!({"title": "${item} ${params.nope} ${steps.zz}"}),
            ),
            Step::new("d", "broken", json!({})),
            Step::new("d", "create_task", json!({"title": "${params.topic"})),
            Step::new("e", "create_task", json!({})),
        ],
    );
    let problems: Vec<String> = broken
        .tool_for(&registry)
        .err()
        .unwrap()
        .iter()
        .map(WorkflowProblem::to_string)
        .collect();
    for expected in [
        "step `a`: reads step `b`, which runs after it; a step reads only earlier ones",
        "step `a`: gives `extra`, which `web_search` does not take",
        "step `b`: calls `no_such_tool`, which is no tool of the registry",
        "step `c`: reads `item`, which only a `for_each` step has",
        "step `c`: reads `params.nope`, which is no parameter of the workflow",
        "step `c`: reads step `zz`, and there is no such step",
        "step `d`: the workflow calls itself (a cycle)",
        "step `d`: two steps have this id; give each its own",
        "step `d`: `${params.topic`: a `${` is not closed",
        "step `e`: does not give `title`, which `create_task` requires",
    ] {
        assert!(
            problems.iter().any(|p| p == expected),
            "missing {expected:?} in {problems:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_loop_and_http_call_a_workflow_like_any_tool() {
    let tasks = Arc::new(Mutex::new(Vec::new()));
    let registry = registry(Arc::clone(&tasks)).await;
    registry
        .register(news_to_tasks().tool_for(&registry).unwrap())
        .unwrap();
    let model = Scripted::new([
        calls(&[("c1", "news_to_tasks", r#"{"topic": "Rust"}"#)]),
        text("Three tasks are made."),
    ]);
    let agent = Agent::builder(registry.clone(), model).build();
    let run = agent
        .run(&public(), "make tasks of the Rust news")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Three tasks are made."));
    assert_eq!(tasks.lock().unwrap().len(), 3);

    let app = router(
        registry,
        |_: &axum::http::request::Parts| Ok(public()),
        HttpOptions::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let answer: Value = reqwest::Client::new()
        .post(format!("{base}/tools/call"))
        .json(&json!({"id": "h1", "name": "news_to_tasks", "arguments": {"topic": "HTTP"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(tasks.lock().unwrap().len(), 6);
}

/// The news → tasks workflow as a tool file: the same tool, the same steps, the same result
/// as the one built in code.
const NEWS_TO_TASKS_FILE: &str = r#"---
name: news_to_tasks
description: The tool news_to_tasks.
permission: public
parameters: {topic: string}
workflow:
  steps:
    - {id: search, tool: web_search, arguments: {query: "${params.topic}"}}
    - id: tasks
      tool: create_task
      for_each: "${steps.search.results}"
      arguments: {title: "Follow up: ${item.title}"}
---
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_workflow_from_a_tool_file_and_from_code_runs_alike() {
    use toolgate_tools::file_tools::{FileTools, load_file, register_file_tool};
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("news_to_tasks.md");
    std::fs::write(&path, NEWS_TO_TASKS_FILE).unwrap();
    let (from_file, from_code) = (Arc::default(), Arc::default());
    let file_registry = registry(Arc::clone(&from_file)).await;
    let settings = FileTools::new(vec![folder.path().to_path_buf()]);
    let loaded = load_file(&path, &settings).unwrap();
    register_file_tool(&file_registry, loaded).unwrap();
    let code_registry = registry(Arc::clone(&from_code)).await;
    code_registry
        .register(news_to_tasks().tool_for(&code_registry).unwrap())
        .unwrap();

    let shape = |registry: &Registry| {
        let definition = registry.definition(&public(), "news_to_tasks").unwrap();
        (
            definition.permission.clone(),
            definition.input_schema["required"].clone(),
        )
    };
    assert_eq!(shape(&file_registry), shape(&code_registry));
    let call = || ToolCall::new("n1", "news_to_tasks", json!({"topic": "Rust"}));
    let file_result = file_registry.call(&public(), call()).await.result.unwrap();
    let code_result = code_registry.call(&public(), call()).await.result.unwrap();
    assert_eq!(file_result, code_result);
    assert_eq!(*from_file.lock().unwrap(), *from_code.lock().unwrap());
    assert_eq!(from_file.lock().unwrap().len(), 3);
}
