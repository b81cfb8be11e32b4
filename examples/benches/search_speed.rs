//! What tool search costs among 10,000 synthetic tools of varied names, descriptions and
//! parameters: a search (toolgate's scorer against plain BM25, the same registry path),
//! building the index, and keeping it current when one tool is registered and removed.
//!
//! `cargo bench -p toolgate-examples --bench search_speed`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate::search::{Bm25Index, Scorer};
use toolgate::{Caller, FnTool, Registry, ToolDefinition, ToolError};
use toolgate_examples::plain_bm25::PlainBm25;

const TOOLS: usize = 10_000;

const VERBS: [&str; 12] = [
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "book",
    "cancel",
    "send",
    "export",
    "import",
    "calculate",
];
const THINGS: [&str; 24] = [
    "invoice",
    "customer",
    "appointment",
    "flight",
    "hotel",
    "weather",
    "ticket",
    "order",
    "payment",
    "report",
    "message",
    "calendar",
    "contact",
    "document",
    "image",
    "playlist",
    "recipe",
    "vehicle",
    "shipment",
    "account",
    "server",
    "metric",
    "alert",
    "project",
];
const DOMAINS: [&str; 40] = [
    "billing",
    "crm",
    "travel",
    "support",
    "shop",
    "finance",
    "media",
    "music",
    "fleet",
    "logistics",
    "health",
    "school",
    "bank",
    "insurance",
    "hr",
    "payroll",
    "inventory",
    "legal",
    "events",
    "maps",
    "mail",
    "chat",
    "storage",
    "devops",
    "monitoring",
    "analytics",
    "ads",
    "social",
    "news",
    "sports",
    "games",
    "weather",
    "energy",
    "garden",
    "kitchen",
    "pets",
    "library",
    "museum",
    "cinema",
    "realestate",
];
const WORDS: [&str; 32] = [
    "quickly", "by", "id", "name", "date", "range", "status", "owner", "region", "currency",
    "amount", "priority", "tag", "note", "language", "timezone", "format", "limit", "page",
    "sorted", "filtered", "recent", "archived", "shared", "public", "private", "draft", "approved",
    "pending", "total", "summary", "details",
];

/// A deterministic stream of numbers (the data only has to vary, not be random).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

fn tools() -> Vec<ToolDefinition> {
    let mut numbers = Numbers(7);
    (0..TOOLS)
        .map(|index| {
            let verb = VERBS[index % VERBS.len()];
            let thing = THINGS[(index / VERBS.len()) % THINGS.len()];
            let domain = DOMAINS[(index / (VERBS.len() * THINGS.len())) % DOMAINS.len()];
            let name = format!("{domain}_{verb}_{thing}_{index}");
            let words: Vec<&str> = (0..12).map(|_| WORDS[numbers.next(WORDS.len())]).collect();
            let description = format!(
                "{verb} a {thing} in {domain}, {} ({index}).",
                words.join(" ")
            );
            let properties: serde_json::Map<String, serde_json::Value> = (0..3)
                .map(|_| {
                    let field = WORDS[numbers.next(WORDS.len())];
                    (
                        field.to_owned(),
                        json!({"type": "string", "description": format!("The {thing}'s {field}.")}),
                    )
                })
                .collect();
            ToolDefinition::new(
                name,
                description,
                "public",
                json!({"type": "object", "properties": properties}),
            )
        })
        .collect()
}

fn registry(tools: &[ToolDefinition], plain: bool) -> Registry {
    let mut builder = Registry::builder().roles(["public"]).linked_tools(false);
    if plain {
        builder = builder.search_scorer(PlainBm25::default());
    }
    for tool in tools {
        builder = builder.tool(FnTool::new(tool.clone(), |_, _| async {
            Ok::<_, ToolError>(json!(null))
        }));
    }
    builder.build().expect("the synthetic tools are valid")
}

const QUERIES: [&str; 6] = [
    "book a hotel for my trip to Paris next week",
    "cancel the pending payment of invoice 42",
    "what's the weather going to be on Monday",
    "send a message to the support team about my order",
    "export the monthly billing report as csv",
    "list recent alerts of the monitoring servers",
];

fn search(c: &mut Criterion) {
    let tools = tools();
    let caller = Caller::new("bench", "public");
    let mut group = c.benchmark_group("search_10k_tools");
    for (label, plain) in [("plain_bm25", true), ("toolgate", false)] {
        let registry = registry(&tools, plain);
        let mut next = 0;
        group.bench_function(label, |b| {
            b.iter(|| {
                next = (next + 1) % QUERIES.len();
                black_box(registry.search(&caller, QUERIES[next], 5))
            })
        });
    }
    group.finish();
}

fn build_index(c: &mut Criterion) {
    let tools = tools();
    let mut group = c.benchmark_group("index_10k_tools");
    group.sample_size(10);
    group.bench_function("plain_bm25", |b| {
        b.iter(|| {
            let mut index = PlainBm25::default();
            tools.iter().for_each(|tool| index.insert(tool, 0));
            black_box(index)
        })
    });
    group.bench_function("toolgate", |b| {
        b.iter(|| {
            let mut index = Bm25Index::default();
            tools.iter().for_each(|tool| index.insert(tool, 0));
            black_box(index)
        })
    });
    group.finish();
}

fn keep_current(c: &mut Criterion) {
    let tools = tools();
    let mut index = Bm25Index::default();
    tools.iter().for_each(|tool| index.insert(tool, 0));
    let extra = ToolDefinition::new(
        "garden_water_plants",
        "Water the plants of a garden zone.",
        "public",
        json!({"type": "object", "properties": {"zone": {"type": "string"}}}),
    );
    let mut group = c.benchmark_group("keep_current_10k_tools");
    group.bench_function("index_insert_and_remove", |b| {
        b.iter(|| {
            index.insert(&extra, 0);
            index.remove(&extra.name);
        })
    });
    let registry = registry(&tools, false);
    group.sample_size(20);
    group.bench_function("registry_register_and_unregister", |b| {
        b.iter_batched(
            || {
                FnTool::new(extra.clone(), |_, _| async {
                    Ok::<_, ToolError>(json!(null))
                })
            },
            |tool| {
                registry.register(tool).expect("the tool is valid");
                registry.unregister(&extra.name)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, search, build_index, keep_current);
criterion_main!(benches);
