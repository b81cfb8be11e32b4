//! Instructions per call, counted by valgrind's callgrind: stable where timings are not (a
//! shared or noisy machine). Each row runs its calls twice, N and 2N times, each in a process
//! of its own under callgrind, counted from where its calls begin (start-up, the runtime
//! and the registry's build are not counted), and reports (instructions(2N) −
//! instructions(N)) / N, so what the first call builds cancels out.
//!
//! `cargo bench -p toolgate --features mcp --bench call_instructions` (needs `valgrind`)
//!
//! Run by itself with `<row> <count>`, it makes that many calls and exits (what callgrind
//! counts).

#[path = "common/callgrind.rs"]
mod callgrind;
mod common;

use common::{
    ADD, Rmcp, RmcpTools, SEARCH, call_copying_names, call_to, connect, floor_add, floor_search,
    registries, registry_with_noop_stage, round_trip,
};
use std::hint::black_box;
use toolgate::mcp::McpServer;
use toolgate::prelude::*;

const ROWS: [&str; 16] = [
    "floor_add",
    "rmcp_add",
    "toolgate_add",
    "toolgate_add_history_off",
    "toolgate_add_noop_stage",
    "toolgate_add_names_copied",
    "floor_search",
    "rmcp_search",
    "toolgate_search",
    "toolgate_search_history_off",
    "toolgate_search_noop_stage",
    "toolgate_add_in_batch",
    "mcp_rmcp_server_add",
    "mcp_toolgate_server_add",
    "mcp_rmcp_server_search",
    "mcp_toolgate_server_search",
];

const CALLS: u64 = 2_000;

fn main() {
    match callgrind::counted_run() {
        Some((row, count)) => run(&row, count),
        None => report(),
    }
}

fn report() {
    let program = std::env::current_exe().expect("the bench's own path");
    println!("{:<30} {:>14}", "row", "instructions/call");
    let mut floors = std::collections::HashMap::new();
    for row in ROWS {
        let per_call = callgrind::per_call(&program, row, CALLS);
        let tool = if row.contains("search") {
            "search"
        } else {
            "add"
        };
        if row.starts_with("floor") {
            floors.insert(tool, per_call);
        }
        let over = per_call.saturating_sub(floors.get(tool).copied().unwrap_or(0));
        println!("{row:<30} {per_call:>14} (+{over} over the floor)");
    }
}

/// What a row calls, worked out once before its loop: the loop itself costs the same for
/// every row (a text comparison per call would be counted against the rows matched last).
#[derive(Clone, Copy)]
enum Kind {
    FloorAdd,
    FloorSearch,
    Rmcp,
    Toolgate {
        history_off: bool,
    },
    /// The default registry with one no-op application stage.
    ToolgateNoopStage,
    /// The default registry, the call's id and name copied into it (a kind of its own, not
    /// a flag of `Toolgate`: choosing how to make the call inside the loop would be counted
    /// against every toolgate row, about 10 instructions a call).
    ToolgateNamesCopied,
    ToolgateBatch,
    McpRmcp,
    McpToolgate,
}

fn kind_of(row: &str) -> Kind {
    match row {
        "floor_add" => Kind::FloorAdd,
        "floor_search" => Kind::FloorSearch,
        "rmcp_add" | "rmcp_search" => Kind::Rmcp,
        "toolgate_add_in_batch" => Kind::ToolgateBatch,
        "toolgate_add_names_copied" => Kind::ToolgateNamesCopied,
        "mcp_rmcp_server_add" | "mcp_rmcp_server_search" => Kind::McpRmcp,
        "mcp_toolgate_server_add" | "mcp_toolgate_server_search" => Kind::McpToolgate,
        "toolgate_add" | "toolgate_search" => Kind::Toolgate { history_off: false },
        "toolgate_add_history_off" | "toolgate_search_history_off" => {
            Kind::Toolgate { history_off: true }
        }
        "toolgate_add_noop_stage" | "toolgate_search_noop_stage" => Kind::ToolgateNoopStage,
        other => panic!("no row named `{other}`; the rows are {ROWS:?}"),
    }
}

/// Makes `count` calls of `row` on a single-threaded runtime (one thread, counted exactly).
fn run(row: &str, count: u64) {
    let kind = kind_of(row);
    let (tool, arguments) = if row.contains("search") {
        ("search", SEARCH)
    } else {
        ("add", ADD)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let caller = Caller::new("bench", "public");
        let (default, history_off) = registries();
        let staged = registry_with_noop_stage();
        let rmcp = Rmcp::connect().await;
        let rmcp_server = connect(RmcpTools::routed()).await;
        let toolgate_server = connect(McpServer::for_caller(
            default.clone(),
            Caller::new("bench", "public"),
        ))
        .await;
        callgrind::counting_starts();
        if let Kind::ToolgateBatch = kind {
            let calls = (0..count)
                // Made like the single rows' calls (same id), so that the rows differ only
                // in how toolgate runs them.
                .map(|_| call_to(tool, arguments))
                .collect();
            black_box(default.run_batch(&caller, calls).await);
            return;
        }
        for _ in 0..count {
            match kind {
                Kind::FloorAdd => drop(black_box(floor_add(black_box(ADD)).await)),
                Kind::FloorSearch => drop(black_box(floor_search(black_box(SEARCH)).await)),
                Kind::Rmcp => drop(black_box(rmcp.call(tool, black_box(arguments)).await)),
                Kind::McpRmcp => round_trip(&rmcp_server, tool, arguments).await,
                Kind::McpToolgate => round_trip(&toolgate_server, tool, arguments).await,
                Kind::Toolgate { history_off: off } => {
                    let registry = if off { &history_off } else { &default };
                    let call = call_to(tool, black_box(arguments));
                    let outcome = registry.call(&caller, call).await;
                    drop(black_box(outcome.result.unwrap()));
                }
                Kind::ToolgateNoopStage => {
                    let call = call_to(tool, black_box(arguments));
                    let outcome = staged.call(&caller, call).await;
                    drop(black_box(outcome.result.unwrap()));
                }
                Kind::ToolgateNamesCopied => {
                    let call = call_copying_names(tool, black_box(arguments));
                    let outcome = default.call(&caller, call).await;
                    drop(black_box(outcome.result.unwrap()));
                }
                Kind::ToolgateBatch => unreachable!("the batch row makes its calls above"),
            }
        }
    });
}
