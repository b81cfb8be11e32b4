//! What Cedar rules cost, counted by valgrind's callgrind: one call of `add` through the
//! registry, and one listing of a caller's 20 tools, with no rules, with 10 rules about
//! `add`'s typed arguments, and with 1,000 rules spread over the 20 tools (50 about `add`)
//! or all about `add` (none of them holding for the calls made). A registry without rules
//! pays nothing for them.
//!
//! `cargo bench -p toolgate --features cedar --bench cedar_cost` (needs `valgrind`)

#[path = "common/callgrind.rs"]
mod callgrind;

use serde_json::json;
use toolgate::cedar::CedarPolicies;
use toolgate::prelude::*;
use toolgate::{FnTool, ToolDefinition};

const CALLS: u64 = 200;
const LISTINGS: u64 = 20;

/// Add two numbers.
#[tool(permission = "staff", read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    match callgrind::counted_run() {
        Some((row, count)) => run(&row, count),
        None => report(),
    }
}

fn report() {
    let program = std::env::current_exe().expect("the bench's own path");
    for what in ["call", "list"] {
        let count = if what == "call" { CALLS } else { LISTINGS };
        let none = callgrind::per_call(&program, &format!("{what}/0"), count);
        let unit = if what == "call" {
            "a call of add"
        } else {
            "a listing of 20 tools"
        };
        println!("instructions per {unit}: no rules {none}");
        for (rules, shown) in [
            ("10", "10 rules about add"),
            ("1000", "1,000 rules, 50 about add"),
            ("1000-add", "1,000 rules about add"),
        ] {
            let counted = callgrind::per_call(&program, &format!("{what}/{rules}"), count);
            println!(
                "  {shown}: {counted} (+{} over no rules)",
                counted.saturating_sub(none)
            );
        }
    }
}

/// `count` rules: about `add` only, or spread over the 20 tools; none holds for the calls
/// made.
fn rules(count: usize, all_about_add: bool) -> String {
    (0..count)
        .map(|n| match (all_about_add, n % 20) {
            (true, _) | (false, 19) => format!("@id(\"r{n}\") forbid (principal, action == Action::\"call:add\", resource) when {{ context.arguments.a == {} }};\n", 1000 + n),
            (false, other) => format!("@id(\"r{n}\") forbid (principal, action == Action::\"call:other_{other}\", resource) when {{ context.arguments.x == {n} }};\n"),
        })
        .collect()
}

fn registry(rules_count: usize, all_about_add: bool) -> Registry {
    let mut builder = Registry::builder().roles(["public", "staff"]);
    for n in 0..19 {
        let schema =
            json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]});
        let definition =
            ToolDefinition::new(format!("other_{n}"), "Another tool.", "staff", schema);
        builder = builder.tool(FnTool::new(definition, |_context, _arguments| async {
            Ok(json!(0))
        }));
    }
    if rules_count > 0 {
        let text = rules(rules_count, all_about_add);
        builder = builder.cedar(CedarPolicies::new().text("bench.cedar", text));
    }
    builder.build().unwrap()
}

fn run(row: &str, count: u64) {
    let (what, rules) = row.split_once('/').expect("a row is `call/N` or `list/N`");
    let (count_of_rules, all_about_add) = match rules.strip_suffix("-add") {
        Some(count) => (count, true),
        None => (rules, rules == "10"),
    };
    let registry = registry(
        count_of_rules.parse().expect("a number of rules"),
        all_about_add,
    );
    let caller = Caller::new("ana", "staff");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    callgrind::counting_starts();
    for _ in 0..count {
        match what {
            "call" => {
                let outcome = runtime.block_on(
                    registry.call(&caller, ToolCall::new("c", "add", json!({"a": 2, "b": 3}))),
                );
                assert!(outcome.result.is_ok(), "{outcome:?}");
            }
            _ => assert_eq!(std::hint::black_box(registry.visible_to(&caller)).len(), 20),
        }
    }
}
