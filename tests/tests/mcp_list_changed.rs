//! Tools added or removed at run time reach connected MCP clients as
//! `notifications/tools/list_changed`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tokio::sync::Notify;
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
use toolgate::{FnTool, ToolDefinition};
use toolgate_tests::connect_in_memory;

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
    let server = McpServer::for_caller(registry.clone(), Caller::new("u", "user"));
    let changed = Arc::new(Notify::new());
    let client = connect_in_memory(server, Listener(Arc::clone(&changed))).await;
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
