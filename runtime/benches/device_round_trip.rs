//! A call routed to a device over its link, beside the same call made locally and the same
//! call to an imported MCP server over Streamable HTTP (the way to reach another machine
//! that is reachable), side by side in one run, all on loopback: the hub's registry calls
//! `add` itself (`local`), on the device `bench` over its WebSocket (`device_link`), and on
//! an MCP server it imported (`mcp_import_http`). The device and the MCP server serve the
//! same registry.
//!
//! `cargo bench -p toolgate --features devices --bench device_round_trip`

mod common;

use std::hint::black_box;
use std::time::Duration;

use common::{ADD, call_to};
use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::devices::{Device, DeviceHub, DeviceLink};
use toolgate::mcp::McpImport;
use toolgate::{Caller, Registry};

const TOKEN: &str = "bench-device-token";

/// Serves `app` on a free loopback port; its base URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// The hub's registry, with the device `bench` online and the same tools imported over MCP.
async fn hub() -> Registry {
    let device = Device::new("bench")
        .token(TOKEN)
        .permission("public")
        .accept(["add"])
        .read_only(["add"]);
    let hub = DeviceHub::new([device]);
    let registry = hub
        .attach(Registry::builder().roles(["public"]))
        .build()
        .unwrap();
    let anyone = |_: &axum::http::request::Parts| Ok(Caller::new("bench", "public"));
    let base = serve(hub.router(registry.clone(), anyone).unwrap()).await;

    let remote = Registry::builder().roles(["public"]).build().unwrap();
    let link = DeviceLink::new(&base, TOKEN, remote.clone(), Caller::new("hub", "public"));
    tokio::spawn(link.run());
    let mcp = serve(
        axum::Router::new().nest_service("/mcp", toolgate::mcp::http_service(remote, anyone)),
    )
    .await;
    let imported = McpImport::http("other", format!("{mcp}/mcp"))
        .permission("public")
        .allow(["add"])
        .connect()
        .await
        .unwrap();
    for tool in imported.tools() {
        registry.register(tool).unwrap();
    }
    while !hub.devices()[0].online {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    registry
}

fn device_round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = runtime.block_on(hub());
    let caller = Caller::new("bench", "public");
    let mut group = c.benchmark_group("device_add");
    for (row, tool) in [
        ("local", "add"),
        ("device_link", "bench__add"),
        ("mcp_import_http", "mcp_other_add"),
    ] {
        group.bench_function(row, |b| {
            b.to_async(&runtime).iter(|| async {
                let outcome = registry.call(&caller, call_to(tool, black_box(ADD))).await;
                assert!(outcome.result.is_ok(), "{row}: {:?}", outcome.result);
                black_box(outcome)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, device_round_trip);
criterion_main!(benches);
