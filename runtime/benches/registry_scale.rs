//! A registry of 1,000 tools: `build()`, and listing the tools of one role, against a
//! hand-written baseline that filters a `Vec` of definitions and serializes it per request.
//!
//! `cargo bench -p toolgate --bench registry_scale`

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use toolgate::prelude::*;
use toolgate::{FnTool, ToolDefinition};

const ROLES: [&str; 4] = ["public", "customer", "staff", "admin"];

fn definitions() -> Vec<ToolDefinition> {
    (0..1000)
        .map(|i| {
            ToolDefinition::new(
                format!("tool_{i:04}"),
                format!("Tool number {i}."),
                ROLES[i % ROLES.len()],
                json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "maxLength": 200},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100}
                    },
                    "required": ["query"],
                    "additionalProperties": false
                }),
            )
        })
        .collect()
}

fn build(definitions: &[ToolDefinition]) -> Registry {
    let mut builder = Registry::builder().roles(ROLES).linked_tools(false);
    for definition in definitions {
        builder = builder.tool(FnTool::new(definition.clone(), |_, _| async {
            Ok(Value::Null)
        }));
    }
    builder.build().unwrap()
}

fn build_1000(c: &mut Criterion) {
    let definitions = definitions();
    let mut group = c.benchmark_group("build_1000_tools");
    group.sample_size(10);
    group.bench_function("registry_build", |b| {
        b.iter(|| black_box(build(black_box(&definitions))))
    });
    group.finish();
}

fn list_for_role(c: &mut Criterion) {
    let definitions = definitions();
    let registry = build(&definitions);
    let caller = Caller::new("bench", "customer");
    let mut group = c.benchmark_group("list_for_role_among_1000");
    group.bench_function("baseline_filter_and_serialize", |b| {
        b.iter(|| {
            let visible: Vec<&ToolDefinition> = definitions
                .iter()
                .filter(|d| d.permission == "public" || d.permission == "customer")
                .collect();
            black_box(serde_json::to_value(visible).unwrap())
        })
    });
    group.bench_function("registry_visible_json", |b| {
        b.iter(|| black_box(registry.visible_json(black_box(&caller))))
    });
    group.bench_function("registry_visible_to", |b| {
        b.iter(|| black_box(registry.visible_to(black_box(&caller))))
    });
    group.finish();
}

criterion_group!(benches, build_1000, list_for_role);
criterion_main!(benches);
