//! What the file-tool tests share: a registry of every file tool for one role, run without
//! asking (the sandbox is what is tested), and one call.

use serde_json::Value;
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate_tools::files::{self, Sandbox};

/// Every file tool for the role `user`, over `sandbox`.
pub fn file_tools(sandbox: Sandbox) -> Registry {
    let mut builder = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .policy_mode(PolicyMode::Auto)
        .state(sandbox);
    for template in files::tools() {
        builder = builder.tool(template.permission("user"));
    }
    builder.build().unwrap()
}

/// One call of `tool` by a `user`.
pub async fn call(registry: &Registry, tool: &str, arguments: Value) -> Result<Value, ToolError> {
    registry
        .call(
            &Caller::new("u", "user"),
            ToolCall::new("1", tool, arguments),
        )
        .await
        .result
}
