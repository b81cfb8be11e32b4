//! Tasks persist across restarts; device info describes this machine; programs run only
//! from the allowlist, without a shell, inside the sandbox, with a timeout and an output cap;
//! every tool's risk and hints are right.

use std::fs;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate::{Hints, ToolTemplate};
use toolgate_tools::files::Sandbox;
use toolgate_tools::programs::{self, ArgKind, CommandConfig, ProgramPolicy};
use toolgate_tools::{files, system, tasks, web};

fn user() -> Caller {
    Caller::new("alice", "user")
}

fn tasks_registry(path: &std::path::Path) -> Registry {
    let mut builder = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .state(tasks::TaskStore::open(path).unwrap());
    for template in tasks::tools() {
        builder = builder.tool(template.permission("user"));
    }
    builder.build().unwrap()
}

async fn call(registry: &Registry, tool: &str, arguments: Value) -> Result<Value, ToolError> {
    registry
        .call(&user(), ToolCall::new("1", tool, arguments))
        .await
        .result
}

#[tokio::test]
async fn tasks_survive_closing_and_reopening_the_database() {
    let directory = TempDir::new().unwrap();
    let path = directory.path().join("tasks.db");
    {
        let registry = tasks_registry(&path);
        call(
            &registry,
            "create_task",
            json!({"title": "Call the vet", "tags": ["pets"]}),
        )
        .await
        .unwrap();
        let second = call(&registry, "create_task", json!({"title": "Buy food"}))
            .await
            .unwrap();
        call(&registry, "complete_task", json!({"id": second["id"]}))
            .await
            .unwrap();
    }
    let registry = tasks_registry(&path);
    let all = call(&registry, "list_tasks", json!({})).await.unwrap();
    assert_eq!(
        all,
        json!([
            {"id": 1, "title": "Call the vet", "tags": ["pets"], "status": "open"},
            {"id": 2, "title": "Buy food", "tags": [], "status": "done"}
        ])
    );
    assert_eq!(
        call(&registry, "list_tasks", json!({"status": "open"}))
            .await
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        call(&registry, "list_tasks", json!({"tag": "pets"}))
            .await
            .unwrap()[0]["id"],
        1
    );
    let missing = call(&registry, "complete_task", json!({"id": 99}))
        .await
        .unwrap_err();
    assert_eq!(missing.code.as_str(), "not_found");
}

#[tokio::test]
async fn device_info_describes_this_machine() {
    let registry = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .tool(system::get_device_info_tool().permission("user"))
        .build()
        .unwrap();
    let info = call(&registry, "get_device_info", json!({})).await.unwrap();
    assert!(info["system"]["cpus"].as_u64().unwrap() >= 1);
    assert!(info["system"]["memory_total_bytes"].as_u64().unwrap() > 0);
    assert!(info.get("disks").is_none());
    let all = call(
        &registry,
        "get_device_info",
        json!({"include": ["system", "disk", "network", "processes"]}),
    )
    .await
    .unwrap();
    assert!(all["processes"].as_array().unwrap().len() <= 10);
    assert!(all["network"].is_array() && all["disks"].is_array());
    let wrong = registry
        .call(
            &user(),
            ToolCall::new("2", "get_device_info", json!({"include": ["gpu"]})),
        )
        .await;
    assert_eq!(wrong.error().unwrap().code, ErrorCode::InvalidArguments);
}

struct Programs {
    registry: Registry,
    root: TempDir,
}

fn programs(timeout: Duration, cap: usize) -> Programs {
    let root = TempDir::new().unwrap();
    fs::create_dir(root.path().join("work")).unwrap();
    fs::write(root.path().join("work/hello.txt"), "hello").unwrap();
    let mut config = CommandConfig::new()
        .program("echo", ProgramPolicy::new().positionals(ArgKind::Text))
        .program("ls", ProgramPolicy::ls())
        .program("sleep", ProgramPolicy::new().positionals(ArgKind::Number))
        .program("seq", ProgramPolicy::new().positionals(ArgKind::Number))
        .program("false", ProgramPolicy::new());
    config.timeout = timeout;
    config.max_output_bytes = cap;
    let registry = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .policy_mode(PolicyMode::Auto)
        .state(config)
        .state(Sandbox::new(root.path()).unwrap())
        .tool(programs::run_command_tool().permission("user"))
        .build()
        .unwrap();
    Programs { registry, root }
}

#[tokio::test]
async fn programs_run_from_the_allowlist_without_a_shell() {
    let p = programs(Duration::from_secs(10), 1000);
    let echoed = call(
        &p.registry,
        "run_command",
        json!({"program": "echo", "args": ["a; rm -rf /", "$(whoami)", "|", "b"]}),
    )
    .await
    .unwrap();
    assert_eq!(echoed["stdout"], "a; rm -rf / $(whoami) | b\n");
    assert_eq!(
        (echoed["exit_code"].clone(), echoed["success"].clone()),
        (json!(0), json!(true))
    );
    let listed = call(
        &p.registry,
        "run_command",
        json!({"program": "ls", "cwd": "work"}),
    )
    .await
    .unwrap();
    assert_eq!(listed["stdout"], "hello.txt\n");
    let failed = call(&p.registry, "run_command", json!({"program": "false"}))
        .await
        .unwrap();
    assert_eq!(
        (failed["exit_code"].clone(), failed["success"].clone()),
        (json!(1), json!(false))
    );
    for program in ["sh", "bash", "rm", "/bin/echo", "echo ; ls"] {
        let refused = call(
            &p.registry,
            "run_command",
            json!({"program": program, "args": ["-c", "id"]}),
        )
        .await
        .unwrap_err();
        assert_eq!(refused.code.as_str(), "program_not_allowed", "{program}");
    }
    for cwd in ["..", "/tmp", "work/hello.txt", "missing"] {
        let refused = call(
            &p.registry,
            "run_command",
            json!({"program": "ls", "cwd": cwd}),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(
                refused.code.as_str(),
                "path_not_allowed" | "not_a_directory" | "not_found"
            ),
            "{cwd}: {}",
            refused.code
        );
    }
    assert!(p.root.path().join("work/hello.txt").exists());
}

#[tokio::test]
async fn programs_are_stopped_at_their_timeout_and_output_is_capped() {
    let p = programs(Duration::from_millis(200), 100);
    let slow = call(
        &p.registry,
        "run_command",
        json!({"program": "sleep", "args": ["30"]}),
    )
    .await
    .unwrap_err();
    assert_eq!(slow.code, ErrorCode::Timeout);
    let long = call(
        &p.registry,
        "run_command",
        json!({"program": "seq", "args": ["1", "100000"]}),
    )
    .await
    .unwrap();
    assert_eq!(long["stdout"].as_str().unwrap().len(), 100);
    assert_eq!(long["stdout_truncated"], true);
    assert_eq!(
        long["exit_code"], 0,
        "the rest of the output was drained, so the program finished"
    );
}

#[tokio::test]
async fn run_command_needs_approval_under_the_default_policy() {
    let root = TempDir::new().unwrap();
    let registry = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .state(
            CommandConfig::new().program("echo", ProgramPolicy::new().positionals(ArgKind::Text)),
        )
        .state(Sandbox::new(root.path()).unwrap())
        .tool(programs::run_command_tool().permission("user"))
        .build()
        .unwrap();
    let outcome = registry
        .call(
            &user(),
            ToolCall::new("1", "run_command", json!({"program": "echo"})),
        )
        .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::ApprovalRequired);
}

#[test]
fn every_tool_has_the_right_risk_and_hints() {
    let hints = |template: ToolTemplate| {
        let definition = template.definition();
        (definition.name, definition.risk, definition.hints)
    };
    let read_only = Hints {
        read_only: true,
        ..Hints::default()
    };
    let read_only_idempotent = Hints {
        read_only: true,
        idempotent: true,
        ..Hints::default()
    };
    assert_eq!(
        hints(files::read_file_tool()),
        ("read_file".into(), Risk::Low, read_only_idempotent)
    );
    assert_eq!(hints(files::list_directory_tool()).2, read_only_idempotent);
    assert_eq!(hints(files::search_files_tool()).2, read_only_idempotent);
    assert!(!hints(files::write_file_tool()).2.read_only);
    assert!(!hints(files::create_directory_tool()).2.read_only);
    assert!(!hints(files::move_path_tool()).2.read_only);
    let delete = hints(files::delete_directory_tool()).2;
    assert!(delete.destructive && !delete.read_only);
    assert_eq!(hints(system::get_device_info_tool()).2, read_only);
    let fetch = hints(web::fetch_webpage_tool()).2;
    assert!(fetch.read_only && fetch.open_world);
    let (_, risk, run) = hints(programs::run_command_tool());
    assert_eq!(risk, Risk::Critical);
    assert!(run.open_world && !run.read_only);
    assert!(hints(tasks::list_tasks_tool()).2.read_only);
    assert!(!hints(tasks::create_task_tool()).2.read_only);
    assert!(hints(tasks::complete_task_tool()).2.idempotent);
    // Nothing hard-codes a role: every permission is the application's choice.
    for template in files::tools().into_iter().chain(tasks::tools()).chain([
        system::get_device_info_tool(),
        web::fetch_webpage_tool(),
        programs::run_command_tool(),
    ]) {
        assert_eq!(
            template.definition().permission,
            "",
            "{}",
            template.definition().name
        );
    }
}
