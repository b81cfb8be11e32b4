//! Importing the tools of real external MCP servers: a Python server on the official SDK over
//! stdio, and this repository's own server binary over Streamable HTTP.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::mcp::McpImport;
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate::{ErrorCode, Risk};

#[path = "mcp/support.rs"]
#[allow(dead_code)] // each test uses part of it
mod support;
use support::{python, start_fixtures, start_http};

fn external_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/external_server.py")
}

struct Lab {
    registry: Registry,
    calls: PathBuf,
    _directory: TempDir,
}

impl Lab {
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.calls)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    async fn call(&self, tool: &str, arguments: Value) -> ToolOutcome {
        self.registry
            .call(
                &Caller::new("s", "staff"),
                ToolCall::new("1", tool, arguments),
            )
            .await
    }
}

async fn lab(configure: impl FnOnce(McpImport) -> McpImport) -> Lab {
    let directory = TempDir::new().unwrap();
    let calls = directory.path().join("calls.txt");
    let import = McpImport::command(
        "lab",
        python().to_string_lossy(),
        [external_server().to_string_lossy()],
    )
    .env("CALLS_FILE", calls.to_string_lossy())
    .permission("staff");
    let server = configure(import)
        .connect()
        .await
        .expect("the lab server starts");
    let mut builder = Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .policy_mode(PolicyMode::Auto);
    for tool in server.tools() {
        builder = builder.tool(tool);
    }
    Lab {
        registry: builder.build().unwrap(),
        calls,
        _directory: directory,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_imported_with_names_permission_filters_and_risk() {
    let lab = lab(|import| import.deny(["secret"])).await;
    let staff = Caller::new("s", "staff");
    let names: Vec<String> = lab
        .registry
        .visible_to(&staff)
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(
        names,
        [
            "mcp_lab_crash",
            "mcp_lab_echo",
            "mcp_lab_fail",
            "mcp_lab_hang",
            "mcp_lab_wipe"
        ]
    );
    assert!(
        lab.registry
            .visible_to(&Caller::new("p", "public"))
            .is_empty(),
        "the permission applies"
    );
    let echo = lab.registry.definition(&staff, "mcp_lab_echo").unwrap();
    assert_eq!(echo.description, "Repeat a text.");
    assert!(echo.hints.read_only && !echo.hints.destructive && !echo.hints.open_world);
    assert_eq!(echo.risk, Risk::Low);
    let wipe = lab.registry.definition(&staff, "mcp_lab_wipe").unwrap();
    assert!(wipe.hints.destructive);
    assert_eq!(wipe.risk, Risk::High);
    let crash = lab.registry.definition(&staff, "mcp_lab_crash").unwrap();
    assert!(
        crash.hints.destructive && crash.hints.open_world,
        "MCP's defaults: unannotated tools may be destructive"
    );

    let only = lab_with_allowlist().await;
    let names: Vec<String> = only
        .registry
        .visible_to(&staff)
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names, ["remote-echo"]);
}

async fn lab_with_allowlist() -> Lab {
    lab(|import| import.allow(["echo"]).prefix("remote-")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_validated_before_forwarding_and_answered() {
    let lab = lab(|import| import).await;
    let echoed = lab
        .call("mcp_lab_echo", json!({"text": "hi", "times": 2}))
        .await;
    assert_eq!(echoed.result.unwrap(), json!({"result": "hi hi"}));
    let invalid = lab.call("mcp_lab_echo", json!({"text": 5})).await;
    assert_eq!(invalid.error().unwrap().code, ErrorCode::InvalidArguments);
    assert_eq!(
        lab.calls(),
        ["echo"],
        "the invalid call never reached the server"
    );
    let failed = lab.call("mcp_lab_fail", json!({})).await;
    let error = failed.error().unwrap();
    assert_eq!(error.code, ErrorCode::ExecutionFailed);
    // The server's own error text is forwarded (this SDK hides the exception's message).
    assert!(
        error.message.contains("Error executing tool fail"),
        "{}",
        error.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_imported_tools_need_approval_by_default() {
    let directory = TempDir::new().unwrap();
    let calls = directory.path().join("calls.txt");
    let server = McpImport::command(
        "lab",
        python().to_string_lossy(),
        [external_server().to_string_lossy()],
    )
    .env("CALLS_FILE", calls.to_string_lossy())
    .permission("staff")
    .connect()
    .await
    .unwrap();
    let mut builder = Registry::builder().roles(["staff"]).linked_tools(false);
    for tool in server.tools() {
        builder = builder.tool(tool);
    }
    let registry = builder.build().unwrap();
    let outcome = registry
        .call(
            &Caller::new("s", "staff"),
            ToolCall::new("1", "mcp_lab_wipe", json!({"target": "disk"})),
        )
        .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::ApprovalRequired);
    assert!(!calls.exists() || std::fs::read_to_string(&calls).unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_gives_a_clear_error_and_is_restarted() {
    let lab = lab(|import| import).await;
    let crashed = lab.call("mcp_lab_crash", json!({})).await;
    let error = crashed.error().unwrap();
    assert_eq!(error.code.as_str(), "server_unavailable", "{error}");
    assert!(
        error.message.contains("MCP server `lab`") && error.message.contains("restarted"),
        "{}",
        error.message
    );
    let again = lab.call("mcp_lab_echo", json!({"text": "back"})).await;
    assert_eq!(again.result.unwrap(), json!({"result": "back"}));
    assert_eq!(lab.calls(), ["crash", "echo"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_server_times_out_and_is_restarted() {
    let lab = lab(|import| import.call_timeout(Duration::from_millis(1500))).await;
    let hung = lab.call("mcp_lab_hang", json!({})).await;
    // Answered at the deadline: the hung child is shut down after the answer, not before
    // (waiting for it took as long again as the deadline).
    assert!(
        hung.duration < Duration::from_millis(1500).mul_f64(1.9),
        "answered after {:?}",
        hung.duration
    );
    let error = hung.error().unwrap();
    assert_eq!(error.code, ErrorCode::Timeout, "{error}");
    assert!(
        error.message.contains("did not answer within 1.5 s"),
        "{}",
        error.message
    );
    let again = lab.call("mcp_lab_echo", json!({"text": "alive"})).await;
    assert_eq!(again.result.unwrap(), json!({"result": "alive"}));
}

/// Whether the process `pid` has ended (gone, or a zombie left for its parent to reap).
fn ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesized command name.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => true,
    }
}

#[test]
fn a_hung_server_does_not_outlive_its_client() {
    let directory = TempDir::new().unwrap();
    let pid_file = directory.path().join("pid");
    // A runtime of its own, dropped right after the call: nothing is left to finish a
    // shutdown begun in the background.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let lab = lab(|import| {
            import
                .env("PID_FILE", pid_file.to_string_lossy())
                .call_timeout(Duration::from_millis(500))
        })
        .await;
        let hung = lab.call("mcp_lab_hang", json!({})).await;
        assert_eq!(hung.error().unwrap().code, ErrorCode::Timeout);
    });
    drop(runtime);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    // Generous: a server left behind sleeps for an hour.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !ended(&pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(ended(&pid), "the hung server (pid {pid}) is still running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_is_imported_with_its_own_authentication() {
    let sandbox = TempDir::new().unwrap();
    let server = start_http(sandbox.path());
    let url = server.url.clone();
    let remote = McpImport::http("box", &url)
        .bearer_token("user-token")
        .permission("staff")
        .allow(["add", "whoami"])
        .connect()
        .await;
    let remote = remote.expect("the example server's tools are imported");
    let mut builder = Registry::builder().roles(["staff"]).linked_tools(false);
    for tool in remote.tools() {
        builder = builder.tool(tool);
    }
    let registry = builder.build().unwrap();
    let staff = Caller::new("s", "staff");
    let added = registry
        .call(
            &staff,
            ToolCall::new("1", "mcp_box_add", json!({"a": 1, "b": 2})),
        )
        .await;
    let who = registry
        .call(&staff, ToolCall::new("2", "mcp_box_whoami", json!({})))
        .await;
    drop(server);
    assert_eq!(added.result.unwrap(), json!({"result": 3}));
    assert_eq!(
        who.result.unwrap(),
        json!({"result": "user-1 (user)"}),
        "the remote server saw our token's caller"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_audio_and_resources_of_a_remote_server_are_kept() {
    let (fixtures, url) = tokio::task::spawn_blocking(start_fixtures).await.unwrap();
    let remote = McpImport::http("fx", &url)
        .permission("staff")
        .allow([
            "test_image_content",
            "test_audio_content",
            "test_multiple_content_types",
            "test_simple_text",
        ])
        .connect()
        .await
        .expect("the fixtures are imported");
    let mut builder = Registry::builder().roles(["staff"]).linked_tools(false);
    for tool in remote.tools() {
        builder = builder.tool(tool);
    }
    let registry = builder.build().unwrap();
    let staff = Caller::new("s", "staff");
    let definition = registry
        .definition(&staff, "mcp_fx_test_image_content")
        .unwrap();
    assert!(
        definition.returns_content,
        "no output schema: the result is content"
    );
    let mut outcomes = Vec::new();
    for name in [
        "test_image_content",
        "test_audio_content",
        "test_multiple_content_types",
        "test_simple_text",
    ] {
        let call = ToolCall::new("1", format!("mcp_fx_{name}"), json!({}));
        outcomes.push(registry.call(&staff, call).await);
    }
    drop(fixtures);
    let image = outcomes[0].content().expect("content");
    assert!(
        matches!(&image[..], [toolgate::content::Content::Image { mime_type, data }] if mime_type == "image/png" && data.starts_with("iVBORw0KGgo")),
        "{image:?}"
    );
    let audio = outcomes[1].content().expect("content");
    assert!(
        matches!(&audio[..], [toolgate::content::Content::Audio { mime_type, .. }] if mime_type == "audio/wav"),
        "{audio:?}"
    );
    let mixed = outcomes[2].content().expect("content");
    assert_eq!(mixed.len(), 3, "{mixed:?}");
    assert_eq!(
        mixed[0],
        toolgate::content::Content::text("Multiple content types test:")
    );
    assert!(
        matches!(&mixed[2], toolgate::content::Content::Resource { resource } if resource.uri == "test://mixed-content-resource")
    );
    // The model is told of the image by what it gets, never of an image it does not get.
    let for_chat = toolgate::formats::openai::tool_messages(&outcomes[..1]);
    assert_eq!(for_chat[0]["content"], "[image image/png, 69 bytes]");
    // A tool with an output schema stays structured.
    assert!(!outcomes[3].is_content);
    assert_eq!(
        outcomes[3].result.as_ref().unwrap(),
        &json!({"result": "This is a simple text response for testing."})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_servers_tiny_image_reaches_the_model() {
    let suite =
        toolgate_test_support::ConformanceSuite::installed(env!("CARGO_TARGET_TMPDIR").as_ref());
    let (node, script) = suite.server_everything();
    let everything = McpImport::command(
        "everything",
        node.to_string_lossy(),
        [script.to_string_lossy().into_owned(), "stdio".to_owned()],
    )
    .permission("staff")
    .allow(["get-tiny-image", "get-resource-links", "echo"])
    .connect()
    .await
    .expect("server-everything starts");
    let mut builder = Registry::builder().roles(["staff"]).linked_tools(false);
    for tool in everything.tools() {
        builder = builder.tool(tool);
    }
    let registry = builder.build().unwrap();
    let staff = Caller::new("s", "staff");
    let call =
        |name: &str, arguments: Value| registry.call(&staff, ToolCall::new("1", name, arguments));
    let image = call("mcp_everything_get-tiny-image", json!({})).await;
    let blocks = image.content().expect("content blocks");
    let images: Vec<&str> = blocks
        .iter()
        .filter_map(|block| match block {
            toolgate::content::Content::Image { mime_type, .. } => Some(mime_type.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(images, ["image/png"], "{blocks:?}");
    // Anthropic is given the image itself, not a mention of it.
    let message = toolgate::formats::anthropic::tool_result_message(std::slice::from_ref(&image));
    let kinds: Vec<&str> = message["content"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"image"), "{message}");
    let links = call("mcp_everything_get-resource-links", json!({"count": 2})).await;
    let blocks = links.content().expect("content blocks");
    let linked = blocks
        .iter()
        .filter(|block| matches!(block, toolgate::content::Content::ResourceLink { .. }))
        .count();
    assert_eq!(linked, 2, "{blocks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_server_gets_a_minimal_environment_and_what_its_import_names() {
    // cargo gives every test process these; the server must not inherit them.
    for inherited in ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME"] {
        assert!(
            std::env::var_os(inherited).is_some(),
            "{inherited} is set here"
        );
    }
    let directory = TempDir::new().unwrap();
    let env_file = directory.path().join("env");
    let lab = lab(|import| import.env("ENV_FILE", env_file.to_string_lossy())).await;
    // The server is up (it wrote its environment before serving).
    let echoed = lab.call("mcp_lab_echo", json!({"text": "up"})).await;
    assert!(echoed.is_ok(), "{echoed:?}");
    let names = std::fs::read_to_string(&env_file).unwrap();
    let names: Vec<&str> = names.lines().collect();
    assert!(
        names.contains(&"ENV_FILE") && names.contains(&"CALLS_FILE"),
        "{names:?}"
    );
    assert!(names.contains(&"PATH"), "{names:?}");
    let allowed = [
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "TZ",
        "USER",
        "ENV_FILE",
        "CALLS_FILE",
    ];
    // Python itself may add a few of its own (LC_CTYPE when it coerces the locale).
    let extra: Vec<&&str> = names
        .iter()
        .filter(|name| {
            !allowed.contains(name) && !name.starts_with("LC_") && !name.starts_with("PYTHON")
        })
        .collect();
    assert!(
        extra.is_empty(),
        "passed on beyond the allowlist: {extra:?}"
    );
    assert!(!names.contains(&"CARGO_MANIFEST_DIR"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_given_up_on_in_time_and_killed() {
    let directory = TempDir::new().unwrap();
    let pid_file = directory.path().join("pid");
    // A process that reads nothing and answers nothing, after saying who it is.
    let script = format!("echo $$ > {}; exec sleep 3600", pid_file.display());
    let started = std::time::Instant::now();
    let connected = McpImport::command("mute", "sh", ["-c", script.as_str()])
        .permission("staff")
        .connect_timeout(Duration::from_millis(800))
        .connect()
        .await;
    let error = connected
        .err()
        .expect("a server that never answers is an error");
    let message = error.to_string();
    assert!(message.contains("MCP server `mute`"), "{message}");
    assert!(message.contains("did not answer within 0.8 s"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "given up on in time"
    );
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !ended(&pid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ended(&pid), "the mute server (pid {pid}) is still running");
}
