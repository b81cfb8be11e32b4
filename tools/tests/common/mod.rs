//! What the file-tool tests share: a sandbox beside an outside folder, every file tool for one
//! role, run without asking (the sandbox is what is tested), and one call.

use serde_json::Value;
use tempfile::TempDir;
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate_tools::files::{self, Sandbox};

/// Every file tool for the role `user`, over `sandbox`.
fn file_tools(sandbox: Sandbox) -> Registry {
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

/// A sandbox, a folder beside it, and the file tools over the sandbox.
pub struct Fixture {
    pub registry: Registry,
    pub root: TempDir,
    /// A folder beside the sandbox, which nothing may touch.
    pub outside: TempDir,
}

impl Fixture {
    /// The file tools over `root` (as `sandbox`), with `outside` beside it.
    pub fn new(sandbox: Sandbox, root: TempDir, outside: TempDir) -> Fixture {
        Fixture {
            registry: file_tools(sandbox),
            root,
            outside,
        }
    }

    /// One call of `tool` by a `user`.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Value, ToolError> {
        self.registry
            .call(
                &Caller::new("u", "user"),
                ToolCall::new("1", tool, arguments),
            )
            .await
            .result
    }
}
