//! The metrics toolgate records, read from an in-memory exporter: tool calls by tool and
//! outcome (an unknown tool's name is not a label of its own), the duration of operations,
//! approvals waiting and how long they waited, tokens by type.

mod agent;

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use serde_json::json;
use toolgate::agent::Agent;
use toolgate::approval::ApprovalAnswer;
use toolgate::prelude::*;
use toolgate::telemetry::Telemetry;

/// Reads a meter's value.
#[tool(permission = "public", read_only)]
fn read_meter(meter: String) -> String {
    format!("{meter}: 42")
}

/// Resets a meter.
#[tool(permission = "public", destructive)]
fn reset_meter(meter: String) -> String {
    format!("{meter} reset")
}

struct Measured {
    exporter: InMemoryMetricExporter,
    provider: SdkMeterProvider,
}

impl Measured {
    fn new() -> Self {
        let exporter = InMemoryMetricExporter::default();
        let reader = PeriodicReader::builder(exporter.clone()).build();
        let provider = SdkMeterProvider::builder().with_reader(reader).build();
        Measured { exporter, provider }
    }

    fn telemetry(&self) -> Telemetry {
        Telemetry::builder().meter_provider(&self.provider).build()
    }

    /// What the metrics read now (cumulative: the last collection alone says it all).
    fn collected(&self) -> Vec<ResourceMetrics> {
        self.provider.force_flush().unwrap();
        let mut collected = self.exporter.get_finished_metrics().unwrap();
        self.exporter.reset();
        collected.split_off(collected.len().saturating_sub(1))
    }
}

fn has(attributes: &[KeyValue], key: &str, value: &str) -> bool {
    attributes
        .iter()
        .any(|kv| kv.key.as_str() == key && kv.value.as_str() == value)
}

/// The metrics named `name`.
fn named<'a>(collected: &'a [ResourceMetrics], name: &'a str) -> impl Iterator<Item = &'a Metric> {
    collected
        .iter()
        .flat_map(ResourceMetrics::scope_metrics)
        .flat_map(|scope| scope.metrics())
        .filter(move |metric| metric.name() == name)
}

/// The sums of counter `name` (u64 or i64) with their attributes, from the last collection.
fn sums(collected: &[ResourceMetrics], name: &str) -> Vec<(Vec<KeyValue>, i64)> {
    let mut found = Vec::new();
    for metric in named(collected, name) {
        match metric.data() {
            AggregatedMetrics::U64(MetricData::Sum(sum)) => found.extend(
                sum.data_points()
                    .map(|point| (point.attributes().cloned().collect(), point.value() as i64)),
            ),
            AggregatedMetrics::I64(MetricData::Sum(sum)) => found.extend(
                sum.data_points()
                    .map(|point| (point.attributes().cloned().collect(), point.value())),
            ),
            _ => {}
        }
    }
    found
}

/// The counts and sums of histogram `name` with their attributes.
fn histograms(collected: &[ResourceMetrics], name: &str) -> Vec<(Vec<KeyValue>, u64, f64)> {
    let mut found = Vec::new();
    for metric in named(collected, name) {
        match metric.data() {
            AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                found.extend(histogram.data_points().map(|point| {
                    (
                        point.attributes().cloned().collect(),
                        point.count(),
                        point.sum(),
                    )
                }));
            }
            AggregatedMetrics::U64(MetricData::Histogram(histogram)) => {
                found.extend(histogram.data_points().map(|point| {
                    (
                        point.attributes().cloned().collect(),
                        point.count(),
                        point.sum() as f64,
                    )
                }));
            }
            _ => {}
        }
    }
    found
}

#[tokio::test]
async fn calls_are_counted_by_tool_and_outcome_and_approvals_by_their_wait() {
    let measured = Measured::new();
    let registry = Registry::builder()
        .roles(["public", "staff"])
        .telemetry(measured.telemetry())
        .approver("desk", |_request| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            ApprovalAnswer::Approve
        })
        .build()
        .unwrap();
    let caller = Caller::new("ada", "public");
    for call in [
        ToolCall::new("1", "read_meter", json!({"meter": "a"})),
        ToolCall::new("2", "read_meter", json!({"meter": "b"})),
        ToolCall::new("3", "read_meter", json!({"meter": 3})),
        ToolCall::new("4", "no_such_tool_1", json!({})),
        ToolCall::new("5", "no_such_tool_2", json!({})),
        ToolCall::new("6", "reset_meter", json!({"meter": "a"})),
    ] {
        registry.call(&caller, call).await;
    }
    let collected = measured.collected();
    let calls = sums(&collected, "toolgate.tool.calls");
    let count = |tool: &str, outcome: &str| {
        calls
            .iter()
            .filter(|(attributes, _)| {
                has(attributes, "gen_ai.tool.name", tool)
                    && has(attributes, "toolgate.outcome", outcome)
            })
            .map(|(_, value)| *value)
            .sum::<i64>()
    };
    assert_eq!(count("read_meter", "ok"), 2);
    assert_eq!(count("read_meter", "invalid_arguments"), 1);
    // Names nobody registered are one label, whatever the callers wrote.
    assert_eq!(count("_unknown", "unknown_tool"), 2);
    assert!(!format!("{calls:?}").contains("no_such_tool"));
    assert_eq!(count("reset_meter", "ok"), 1);

    let durations = histograms(&collected, "gen_ai.client.operation.duration");
    let timed: u64 = durations
        .iter()
        .filter(|(attributes, ..)| has(attributes, "gen_ai.operation.name", "execute_tool"))
        .map(|(_, count, _)| count)
        .sum();
    assert_eq!(timed, 6);
    let waited = histograms(&collected, "toolgate.approval.wait.duration");
    assert_eq!(waited.len(), 1);
    assert_eq!(waited[0].1, 1);
    assert!(waited[0].2 >= 0.015, "{waited:?}");
    // Asked and answered: no approval is left waiting.
    let waiting: i64 = sums(&collected, "toolgate.approvals.waiting")
        .iter()
        .map(|(_, value)| value)
        .sum();
    assert_eq!(waiting, 0);
}

#[tokio::test]
async fn a_ticket_waits_until_it_is_decided() {
    let measured = Measured::new();
    let registry = Registry::builder()
        .roles(["public", "staff"])
        .telemetry(measured.telemetry())
        .build()
        .unwrap();
    let waiting = |measured: &Measured| -> i64 {
        sums(&measured.collected(), "toolgate.approvals.waiting")
            .iter()
            .map(|(_, value)| value)
            .sum()
    };
    let caller = Caller::new("ada", "public");
    let outcome = registry
        .call(
            &caller,
            ToolCall::new("1", "reset_meter", json!({"meter": "a"})),
        )
        .await;
    let ticket = outcome.error().unwrap().details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(waiting(&measured), 1);
    let approved = registry
        .approve(&ticket, &Caller::new("dr-lee", "staff"))
        .await
        .unwrap();
    assert!(approved.is_ok());
    assert_eq!(waiting(&measured), 0);
}

#[tokio::test]
async fn model_requests_are_timed_and_their_tokens_counted_by_type() {
    use agent::{Ran, Scripted, calls, text};
    let measured = Measured::new();
    let mut first = calls(&[("c1", "lookup_pet", r#"{"name": "Rex"}"#)]);
    first.usage.input_tokens = 100;
    first.usage.output_tokens = 20;
    let mut second = text("A dog.");
    second.usage.input_tokens = 150;
    second.usage.output_tokens = 5;
    let registry = agent::builder(&Ran::default())
        .telemetry(measured.telemetry())
        .build()
        .unwrap();
    Agent::builder(registry, Scripted::new([first, second]))
        .build()
        .run(&Caller::new("cust-1", "customer"), "What is Rex?")
        .await
        .unwrap();
    let collected = measured.collected();
    let tokens = histograms(&collected, "gen_ai.client.token.usage");
    let of = |kind: &str| {
        tokens
            .iter()
            .filter(|(attributes, ..)| has(attributes, "gen_ai.token.type", kind))
            .map(|(_, count, sum)| (*count, *sum))
            .next()
            .unwrap()
    };
    assert_eq!(of("input"), (2, 250.0));
    assert_eq!(of("output"), (2, 25.0));
    let chats: u64 = histograms(&collected, "gen_ai.client.operation.duration")
        .iter()
        .filter(|(attributes, ..)| has(attributes, "gen_ai.operation.name", "chat"))
        .map(|(_, count, _)| count)
        .sum();
    assert_eq!(chats, 2);
}
