//! How each call of a turn is answered: most run; a call the model repeats is answered from
//! its first result; a call cut off at the model's output limit is refused.
//!
//! A read-only tool called again with the same arguments in the same run is answered from
//! its first result, with a note saying so, instead of running again (small models repeat a
//! call they have the answer to, turn after turn). Only while nothing that may have changed
//! something has run since, and only for tools the caller may still use as read-only now.
//!
//! A turn is planned in segments: its reads up to the first call of a tool that may change
//! something, with that call. The batch runs them in that order (reads see the writes
//! requested before them), so the reads of a segment are answered from what ran before it,
//! and the next segment is planned once this one ran (a write refused or denied changed
//! nothing).

mod answers;
mod history;

pub(crate) use answers::{answered_from, cut_off, same_as};

use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use super::builder::Settings;
use super::message::{Message, ModelCall};
use super::run::Run;
use crate::call::ToolOutcome;
use crate::error::ToolError;
use history::{Key, answered, key_of};

/// How one call of a turn is answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    /// It runs.
    Run,
    /// From an earlier call's result: that call's id, and its result as its tool gave it.
    Earlier(String, Result<Value, ToolError>),
    /// As the earlier call of this turn at this index is.
    SameTurnAs(usize),
    /// Not at all: the model stopped at its output limit before its arguments ended.
    CutOff,
}

/// The next segment of the turn's `calls` from `start`: its reads, then the first call of a
/// tool that may change something (if any), with how each is answered. `done` holds the
/// outcomes of the calls before `start`. A reply `cut_off` at the output limit has the
/// calls whose arguments cannot be read refused as such.
pub(crate) fn segment(
    settings: &Settings,
    run: &Run,
    (calls, done): (&[ModelCall], &[ToolOutcome]),
    (start, cut_off): (usize, bool),
) -> (Range<usize>, Vec<Plan>) {
    let read_only = |name: &str| {
        let definition = settings.registry.definition(&run.caller, name);
        definition.is_some_and(|definition| definition.hints.read_only)
    };
    let reads = calls[start..]
        .iter()
        .take_while(|call| read_only(&call.name))
        .count();
    let end = (start + reads + 1).min(calls.len());
    let mut plans = vec![Plan::Run; end - start];
    let segment_reads = &calls[start..start + reads];
    if reads > 0 && may_repeat(segment_reads, &run.transcript, &calls[..start]) {
        let this_turn = calls[..start]
            .iter()
            .zip(done)
            .map(|(call, outcome)| (call, &outcome.result, outcome.is_content));
        let earlier = answered((&run.transcript, &run.marker), this_turn, read_only);
        let mut first_of: HashMap<Key, usize> = HashMap::new();
        for (index, call) in (start..start + reads).zip(segment_reads) {
            let Some(key) = key_of(call) else { continue };
            if let Some(&first) = first_of.get(&key) {
                plans[index - start] = Plan::SameTurnAs(first);
            } else if let Some((id, result)) = earlier.get(&key) {
                plans[index - start] = Plan::Earlier(id.clone(), result.clone());
            } else {
                first_of.insert(key, index);
            }
        }
    }
    if cut_off {
        for (plan, call) in plans.iter_mut().zip(&calls[start..end]) {
            if key_of(call).is_none() {
                *plan = Plan::CutOff;
            }
        }
    }
    (start..end, plans)
}

/// Whether a call of `reads` may repeat another: a tool called twice among them, or called
/// before in the run. Most turns call tools anew, and are told so without reading any
/// arguments.
fn may_repeat(reads: &[ModelCall], transcript: &[Message], this_turn: &[ModelCall]) -> bool {
    let named = |name: &str| reads.iter().any(|call| call.name == name);
    let twice = reads
        .iter()
        .enumerate()
        .any(|(index, call)| reads[..index].iter().any(|other| other.name == call.name));
    let earlier = transcript.iter().any(|message| match message {
        Message::Assistant { calls, .. } => calls.iter().any(|call| named(&call.name)),
        _ => false,
    });
    twice || earlier || this_turn.iter().any(|call| named(&call.name))
}
