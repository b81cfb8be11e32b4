//! An MCP `tools/call` round trip — an rmcp client, an in-memory pipe, the server, and back —
//! to rmcp's own server (its router built once, in the handler) and to toolgate's
//! [`McpServer`](toolgate::mcp::McpServer) over the same registry's tools, side by side in
//! one run.
//!
//! `cargo bench -p toolgate --features mcp --bench mcp_round_trip`

mod common;

use common::{ADD, RmcpTools, SEARCH, connect, round_trip};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use toolgate::mcp::McpServer;
use toolgate::prelude::*;

fn mcp_round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (rmcp, toolgate) = runtime.block_on(async {
        let rmcp = connect(RmcpTools::routed()).await;
        let registry = Registry::builder().roles(["public"]).build().unwrap();
        let server = McpServer::for_caller(registry, Caller::new("bench", "public"));
        (rmcp, connect(server).await)
    });
    for (tool, arguments) in [("add", ADD), ("search", SEARCH)] {
        let mut group = c.benchmark_group(format!("mcp_{tool}"));
        for (name, client) in [("rmcp_server", &rmcp), ("toolgate_mcp_server", &toolgate)] {
            group.bench_function(name, |b| {
                b.to_async(&runtime)
                    .iter(|| round_trip(client, tool, black_box(arguments)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, mcp_round_trip);
criterion_main!(benches);
