//! Many calls at once: one outcome per call, in call order.

use std::task::Poll;

use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::error::{ErrorCode, ToolError};
use crate::registry::Config;
use crate::registry::calling::{Begin, Calling, InBatch};
use crate::registry::cancel::Cancel;
use crate::registry::path::Continuation;
use crate::registry::record;
use crate::registry::run::Run;
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
    /// Validate, authorize and apply the policy to every call, and run none: each outcome
    /// says what would have happened (`{"dry_run": true, "decision": ..., "reason": ...}`,
    /// with `"review"`: what the tool says the call would do, when it says (a workflow: its
    /// steps), or the error the call would have met).
    pub dry_run: bool,
    /// The agent run these calls belong to: their [events](crate::events) carry it.
    pub run_id: Option<String>,
    /// Where the calls came in (rules read it; default: the library).
    pub front: crate::FrontEnd,
}

/// Settings of one call.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Cancelling it ends the call with a `cancelled` outcome.
    pub cancel: Option<CancellationToken>,
    /// Decide, but do not run (see [`BatchOptions::dry_run`]).
    pub dry_run: bool,
    /// The agent run the call belongs to (see [`BatchOptions::run_id`]).
    pub run_id: Option<String>,
    /// Where the call came in (rules read it; default: the library).
    pub front: crate::FrontEnd,
    /// Where the tool's progress reports go (see [`progress`](crate::progress)).
    pub progress: Option<crate::progress::ProgressSink>,
    /// Where the tool's log messages go ([`ToolContext::log`](crate::ToolContext::log)).
    pub log: Option<crate::progress::LogSink>,
    /// The client's answers to what the tool asked (see [`input`](crate::input)).
    pub input: Option<crate::input::ClientInput>,
    /// How to ask the person at the caller's own client about a call that needs approval
    /// (see [`AskCaller`](crate::approval::AskCaller)); `None` waits with a ticket.
    pub ask_caller: Option<crate::approval::AskCaller>,
    /// The tool call this call is a step of (a workflow's, see [`StepOf`](crate::workflow::StepOf)):
    /// if it waits for a person's decision, that call goes on after it.
    pub step_of: Option<crate::paused::StepOf>,
}

pub(crate) async fn run(
    config: &Config,
    snapshot: &Snapshot,
    rank: Option<usize>,
    caller: &Caller,
    calls: Vec<ToolCall>,
    options: BatchOptions,
) -> Vec<ToolOutcome> {
    let limit = options
        .max_concurrency
        .unwrap_or(config.max_concurrency)
        .max(1);
    let mode = options.mode.unwrap_or(config.batch_mode);
    let dry_run = options.dry_run;
    if let Some(max) = config.governance.max_batch
        && calls.len() > max
    {
        let count = calls.len();
        let mut outcomes = Vec::with_capacity(count);
        for call in calls {
            outcomes.push(record::reject(config, caller, call, too_large(count, max)).await);
        }
        return outcomes;
    }
    let run = Run {
        config,
        rank,
        caller,
        cancel: Cancel(options.cancel.as_ref()),
        dry_run,
        run_id: options.run_id.as_deref(),
        front: options.front,
        // Progress, input and the like are one call's (`CallOptions`).
        client: None,
    };
    let mut outcomes = Vec::with_capacity(calls.len());
    for phase in phases(snapshot, rank, calls, mode) {
        if phase.len() == 1 || mode == BatchMode::Sequential {
            for call in phase {
                let call = InBatch {
                    run: &run,
                    snapshot,
                    call,
                };
                outcomes.push(Calling::new(call).await);
            }
            continue;
        }
        joined(&run, snapshot, phase, limit, &mut outcomes).await;
    }
    outcomes
}

/// Runs `calls` concurrently inside this task: joined, not spawned (a task per call costs
/// about as much as the call). A tool that computes for long should use `spawn_blocking`
/// (synchronous `#[tool]` functions do). Each call begins at once ([`path`](super::path)); at
/// most `limit` that wait are waited on at once, and only they are boxed. Outcomes come in
/// call order.
async fn joined(
    run: &Run<'_>,
    snapshot: &Snapshot,
    calls: Vec<ToolCall>,
    limit: usize,
    outcomes: &mut Vec<ToolOutcome>,
) {
    let count = calls.len();
    let mut finished: Vec<Option<ToolOutcome>> = (0..count).map(|_| None).collect();
    let mut next = calls.into_iter().enumerate();
    let mut waiting: Vec<(usize, Continuation<'_>)> = Vec::new();
    std::future::poll_fn(|context| {
        // The calls waiting first: one that finishes frees its place for the next call.
        waiting.retain_mut(|(index, call)| match call.as_mut().poll(context) {
            Poll::Ready(outcome) => {
                finished[*index] = Some(outcome);
                false
            }
            Poll::Pending => true,
        });
        while waiting.len() < limit
            && let Some((index, call)) = next.next()
        {
            let mut call = InBatch {
                run,
                snapshot,
                call,
            };
            let mut continuation = None;
            match call.begin(context, &mut continuation) {
                Poll::Ready(outcome) => finished[index] = Some(outcome),
                Poll::Pending => {
                    let call = continuation.expect("a call that waits goes on in a continuation");
                    waiting.push((index, call));
                }
            }
        }
        if waiting.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    debug_assert!(
        finished.iter().all(Option::is_some),
        "every call has its outcome"
    );
    outcomes.extend(finished.into_iter().flatten());
}

fn too_large(count: usize, max: usize) -> ToolError {
    ToolError::new(
        ErrorCode::BatchTooLarge,
        format!(
            "this batch has {count} calls; at most {max} are accepted at once, so none of them ran: send fewer calls"
        ),
    )
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
    let effects: Vec<bool> = calls
        .iter()
        .map(|call| {
            snapshot
                .visible(rank, &call.name)
                .is_some_and(|entry| !entry.definition.hints.read_only)
        })
        .collect();
    // The usual batch, reads only, is one phase: its calls stay where they are.
    if !effects.contains(&true) {
        return vec![calls];
    }
    let mut phases: Vec<Vec<ToolCall>> = Vec::new();
    let mut parallel: Vec<ToolCall> = Vec::new();
    for (call, has_effects) in calls.into_iter().zip(effects) {
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
