//! A client's cancellation reaches the running tool: an rmcp client and toolgate's MCP server
//! talk over an in-memory pipe; the client gives up on a slow call, which sends
//! `notifications/cancelled`, and the tool sees its cancellation token fire.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
use toolgate_tests::connect_in_memory;

static SAW_CANCELLATION: AtomicBool = AtomicBool::new(false);

/// Wait until cancelled.
#[tool(permission = "user", read_only)]
async fn wait_for_cancellation(#[ctx] cancel: CancellationToken) -> &'static str {
    // The registry drops the tool's future when the call is cancelled; the token is how work
    // the tool started elsewhere learns about it.
    let watcher = cancel.clone();
    tokio::spawn(async move {
        watcher.cancelled().await;
        SAW_CANCELLATION.store(true, Ordering::SeqCst);
    });
    std::future::pending::<()>().await;
    "never"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_cancels_the_running_call() {
    let registry = Registry::builder().roles(["user"]).build().unwrap();
    let server = McpServer::for_caller(registry, Caller::new("u", "user"));
    let client = connect_in_memory(server, ()).await;
    let call = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("wait_for_cancellation"));
    // Giving up drops the request, which sends `notifications/cancelled`.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err()
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !SAW_CANCELLATION.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tool never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The server is still serving.
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
}
