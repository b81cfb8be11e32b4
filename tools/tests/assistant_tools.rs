//! The ready tools assistants ask for besides files and programs: web search against a
//! loopback server answering in each backend's real format, applications from an allowlist,
//! service health and restarts, skills written into the sandbox.

#[path = "assistant/apps.rs"]
mod apps;
#[path = "assistant/services.rs"]
mod services;
#[path = "assistant/skills.rs"]
mod skills;
#[path = "assistant/web_search.rs"]
mod web_search;

use serde_json::Value;
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate::{ConfiguredTool, RegistryBuilder};

/// A registry for the role `user` with these tools and states, run without asking (what is
/// tested is the tools), and one call.
pub struct Tools(Registry);

impl Tools {
    /// The registry of `tools`, with the states `states` adds.
    pub fn new(
        tools: Vec<ConfiguredTool>,
        states: impl FnOnce(RegistryBuilder) -> RegistryBuilder,
    ) -> Tools {
        let mut builder = Registry::builder()
            .roles(["user"])
            .linked_tools(false)
            .policy_mode(PolicyMode::Auto);
        for tool in tools {
            builder = builder.tool(tool);
        }
        Tools(states(builder).build().unwrap())
    }

    /// One call by a `user`.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Value, ToolError> {
        self.call_as(&Caller::new("u", "user"), tool, arguments)
            .await
    }

    /// One call by `caller`.
    pub async fn call_as(
        &self,
        caller: &Caller,
        tool: &str,
        arguments: Value,
    ) -> Result<Value, ToolError> {
        self.0
            .call(caller, ToolCall::new("1", tool, arguments))
            .await
            .result
    }

    /// The tool's definition (risk and hints are part of what the tools promise).
    pub fn definition(&self, tool: &str) -> std::sync::Arc<toolgate::ToolDefinition> {
        self.0.definition(&Caller::new("u", "user"), tool).unwrap()
    }
}

/// The error code of a failed call.
#[track_caller]
pub fn code(result: Result<Value, ToolError>) -> String {
    result.expect_err("the call fails").code.as_str().to_owned()
}
