//! What a workflow step costs over calling its tool directly: a two-integer `add` called
//! 100,000 times directly, and through a one-step workflow (the workflow's call and the
//! step's, each through the registry's whole path), interleaved in five rounds; medians.
//!
//! `cargo bench -p toolgate --bench workflow_step`

use std::time::Instant;

use serde_json::json;
use toolgate::workflow::{Step, Workflow};
use toolgate::{Caller, FnTool, Registry, ToolCall, ToolDefinition};

const CALLS: u32 = 100_000;
const ROUNDS: usize = 5;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .build()
        .unwrap();
    let two = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     "required": ["a", "b"], "additionalProperties": false});
    let add = ToolDefinition::new("add", "Add two integers.", "public", two.clone());
    registry
        .register(FnTool::new(add, |_, arguments| async move {
            Ok(json!(
                arguments["a"].as_i64().unwrap_or(0) + arguments["b"].as_i64().unwrap_or(0)
            ))
        }))
        .unwrap();
    let definition = ToolDefinition::new("add_flow", "Add, as a workflow.", "public", two);
    let steps = vec![Step::new(
        "add",
        "add",
        json!({"a": "${params.a}", "b": "${params.b}"}),
    )];
    registry
        .register(
            Workflow::new(definition, steps)
                .tool_for(&registry)
                .unwrap(),
        )
        .unwrap();
    let caller = Caller::new("bench", "public");
    let per_call = |tool: &str| {
        runtime.block_on(async {
            let started = Instant::now();
            for n in 0..CALLS {
                let call = ToolCall::new("1", tool, json!({"a": n, "b": 1}));
                assert!(registry.call(&caller, call).await.result.is_ok());
            }
            started.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS)
        })
    };
    let (mut direct, mut flow) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        direct.push(per_call("add"));
        flow.push(per_call("add_flow"));
    }
    direct.sort_by(f64::total_cmp);
    flow.sort_by(f64::total_cmp);
    let (direct, flow) = (direct[ROUNDS / 2], flow[ROUNDS / 2]);
    println!("direct call of add     {direct:>8.0} ns");
    println!(
        "one-step workflow      {flow:>8.0} ns  (+{:.0} ns for the workflow: {:.1}x)",
        flow - direct,
        flow / direct
    );
}
