//! The metrics toolgate records: GenAI operation durations and token usage, tool calls by
//! tool and outcome, approvals waiting and how long they waited.

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};

use super::conventions as name;

/// Bucket bounds (seconds) the GenAI conventions advise for operation durations.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/// Bucket bounds (tokens) the GenAI conventions advise for token usage.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The instruments, made once per [`Telemetry`](super::Telemetry).
pub(crate) struct Instruments {
    pub(crate) operation_duration: Histogram<f64>,
    pub(crate) token_usage: Histogram<u64>,
    pub(crate) tool_calls: Counter<u64>,
    pub(crate) approvals_waiting: UpDownCounter<i64>,
    pub(crate) approval_wait: Histogram<f64>,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Self {
        Instruments {
            operation_duration: meter
                .f64_histogram(name::OPERATION_DURATION)
                .with_unit("s")
                .with_description("GenAI operation duration: model requests and tool calls")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            token_usage: meter
                .u64_histogram(name::TOKEN_USAGE)
                .with_unit("{token}")
                .with_description("Tokens used by model requests")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build(),
            tool_calls: meter
                .u64_counter(name::TOOL_CALLS)
                .with_unit("{call}")
                .with_description("Tool calls by tool and outcome (ok, or the error code)")
                .build(),
            approvals_waiting: meter
                .i64_up_down_counter(name::APPROVALS_WAITING)
                .with_unit("{call}")
                .with_description("Calls waiting for a person's approval")
                .build(),
            approval_wait: meter
                .f64_histogram(name::APPROVAL_WAIT_DURATION)
                .with_unit("s")
                .with_description("How long calls waited for a person's approval")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
        }
    }

    /// One tool call ended: `tool` (its own name, or `_unknown`) with `outcome`.
    pub(crate) fn tool_call(&self, tool: &str, outcome: Cow<'static, str>, seconds: f64) {
        // Shared, not copied, by the two instruments' attributes.
        let tool: Arc<str> = Arc::from(tool);
        let failed = outcome != "ok";
        let attributes = [
            KeyValue::new(name::OPERATION_NAME, "execute_tool"),
            KeyValue::new(name::TOOL_NAME, Arc::clone(&tool)),
            KeyValue::new(name::OUTCOME, outcome.clone()),
        ];
        self.tool_calls.add(1, &attributes);
        let [operation, tool, outcome] = attributes;
        match failed {
            true => {
                let error = KeyValue::new(name::ERROR_TYPE, outcome.value);
                self.operation_duration
                    .record(seconds, &[operation, tool, error]);
            }
            false => self.operation_duration.record(seconds, &[operation, tool]),
        }
    }
}
