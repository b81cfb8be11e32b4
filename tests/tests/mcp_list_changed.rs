//! Tools added or removed at run time reach connected MCP clients as
//! `notifications/tools/list_changed`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use tokio::sync::Notify;
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
use toolgate::{FnTool, ToolDefinition};

#[derive(Clone)]
struct Listener(Arc<Notify>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.notify_one();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_time_changes_notify_connected_clients() {
    let registry = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .build()
        .unwrap();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let server = McpServer::for_caller(registry.clone(), Caller::new("u", "user"));
    tokio::spawn(async move {
        let running = server
            .serve(tokio::io::split(server_side))
            .await
            .expect("the server starts");
        let _ = running.waiting().await;
    });
    let changed = Arc::new(Notify::new());
    let client = Listener(Arc::clone(&changed))
        .serve(tokio::io::split(client_side))
        .await
        .expect("the client connects");
    assert!(client.peer().list_all_tools().await.unwrap().is_empty());

    let definition = ToolDefinition::new(
        "echo",
        "Echo.",
        "user",
        json!({"type": "object", "properties": {}}),
    );
    registry
        .register(FnTool::new(definition, |_, arguments| async move {
            Ok(arguments)
        }))
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), changed.notified())
        .await
        .expect("a list_changed notification arrives");
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "echo");
}
