//! Many calls at once: one outcome per call, in call order.

use futures::stream::{self, StreamExt};

use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::registry::Config;
use crate::registry::execute::execute;
use crate::registry::snapshot::Snapshot;

/// How the calls of a batch are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BatchMode {
    /// Consecutive read-only calls run in parallel; every other call runs alone, after the
    /// calls before it and before the calls after it, so effects happen in call order and
    /// reads see the writes requested before them. Calls that cannot run (unknown tool) count
    /// as read-only.
    #[default]
    ReadOnlyParallel,
    /// Every call may run in parallel with every other.
    Parallel,
    /// One call at a time, in call order.
    Sequential,
}

/// Settings of one batch; unset fields take the registry's.
#[derive(Debug, Clone, Default)]
pub struct BatchOptions {
    /// Cancelling it ends every call still pending or running with a `cancelled` outcome.
    pub cancel: Option<CancellationToken>,
    /// Most calls running at once.
    pub max_concurrency: Option<usize>,
    /// How calls are ordered.
    pub mode: Option<BatchMode>,
}

pub(crate) async fn run(
    config: &Config,
    snapshot: &Snapshot,
    rank: Option<usize>,
    caller: &Caller,
    calls: Vec<ToolCall>,
    options: BatchOptions,
) -> Vec<ToolOutcome> {
    let cancel = options.cancel.unwrap_or_default();
    let limit = options
        .max_concurrency
        .unwrap_or(config.max_concurrency)
        .max(1);
    let mode = options.mode.unwrap_or(config.batch_mode);
    let mut outcomes = Vec::with_capacity(calls.len());
    for phase in phases(snapshot, rank, calls, mode) {
        let limit = if mode == BatchMode::Sequential {
            1
        } else {
            limit
        };
        // `buffered` keeps call order; phases are consecutive runs of calls.
        let mut results = stream::iter(phase)
            .map(|call| execute(config, snapshot, rank, caller, call, cancel.child_token()))
            .buffered(limit);
        while let Some(outcome) = results.next().await {
            outcomes.push(outcome);
        }
    }
    outcomes
}

/// Splits calls into consecutive groups that may run concurrently.
fn phases(
    snapshot: &Snapshot,
    rank: Option<usize>,
    calls: Vec<ToolCall>,
    mode: BatchMode,
) -> Vec<Vec<ToolCall>> {
    if mode != BatchMode::ReadOnlyParallel {
        return vec![calls];
    }
    let mut phases: Vec<Vec<ToolCall>> = Vec::new();
    let mut parallel: Vec<ToolCall> = Vec::new();
    for call in calls {
        let has_effects = snapshot
            .visible(rank, &call.name)
            .is_some_and(|entry| !entry.definition.hints.read_only);
        if has_effects {
            if !parallel.is_empty() {
                phases.push(std::mem::take(&mut parallel));
            }
            phases.push(vec![call]);
        } else {
            parallel.push(call);
        }
    }
    if !parallel.is_empty() {
        phases.push(parallel);
    }
    phases
}
