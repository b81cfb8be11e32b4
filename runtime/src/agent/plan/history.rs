//! What the run's calls so far came to, as repeats are answered from it.

use std::collections::HashMap;

use serde_json::Value;

use super::answers::{CUT_OFF, REPEATED_CALL};
use crate::agent::message::{Message, ModelCall};
use crate::error::{ErrorCode, ToolError};

/// A call as compared: the tool and its arguments, read.
pub(super) type Key = (String, Value);

/// A call and what it came to: its result, and whether that is content blocks.
type Answered<'a> = (&'a ModelCall, &'a Result<Value, ToolError>, bool);

/// The results of read-only calls that would come again (see [`lasting`]) since the last
/// call that may have changed something ran (see [`may_have_run`]), by call: the run's
/// `transcript`, then `this_turn`'s calls so far, in the order they ran.
pub(super) fn answered<'a>(
    (transcript, marker): (&'a [Message], &str),
    this_turn: impl Iterator<Item = Answered<'a>>,
    read_only: impl Fn(&str) -> bool,
) -> HashMap<Key, (String, Result<Value, ToolError>)> {
    let mut answered = HashMap::new();
    for (call, result, is_content) in of_transcript(transcript).chain(this_turn) {
        if !read_only(&call.name) {
            if may_have_run(result) {
                answered.clear();
            }
            continue;
        }
        if let Some(key) = key_of(call).filter(|_| lasting(result, is_content)) {
            let answer = unwrapped(result, marker);
            answered.entry(key).or_insert((call.id.clone(), answer));
        }
    }
    answered
}

/// The transcript's calls with their results: one result per call, in call order, as the
/// batch ran them.
fn of_transcript(transcript: &[Message]) -> impl Iterator<Item = Answered<'_>> {
    let mut asked: &[ModelCall] = &[];
    transcript.iter().flat_map(move |message| {
        let pairs: Vec<Answered<'_>> = match message {
            Message::Assistant { calls, .. } => {
                asked = calls;
                Vec::new()
            }
            Message::ToolResults { results } => asked
                .iter()
                .zip(results)
                .filter(|(call, result)| call.id == result.call_id)
                .map(|(call, result)| (call, &result.result, result.is_content))
                .collect(),
            Message::User { .. } => Vec::new(),
        };
        pairs
    })
}

/// Whether a call may have run (and changed something): not when it was refused before.
fn may_have_run(result: &Result<Value, ToolError>) -> bool {
    let Err(error) = result else {
        return true;
    };
    match &error.code {
        ErrorCode::ExecutionFailed
        | ErrorCode::Timeout
        | ErrorCode::Cancelled
        | ErrorCode::Panicked => true,
        ErrorCode::Custom(code) => !NOT_RUN.contains(&code.as_ref()),
        _ => false,
    }
}

/// The codes of the loop's own refusals: the call did not run.
const NOT_RUN: [&str; 3] = [
    CUT_OFF,
    REPEATED_CALL,
    crate::agent::driver::TOOL_CALL_LIMIT,
];

/// Whether the same call would come to the same result: a value, or the tool's own error
/// (not a refusal, a limit or a failure of the moment, which are asked again).
fn lasting(result: &Result<Value, ToolError>, is_content: bool) -> bool {
    match result {
        Ok(_) => !is_content,
        Err(error) => match &error.code {
            ErrorCode::ExecutionFailed => true,
            ErrorCode::Custom(code) => !NOT_RUN.contains(&code.as_ref()),
            _ => false,
        },
    }
}

/// A result as its tool gave it, out of the run's envelope if it was sent in one (its
/// repeat is enveloped again, once).
fn unwrapped(result: &Result<Value, ToolError>, marker: &str) -> Result<Value, ToolError> {
    let opened = |text: &str| crate::agent::envelope::opened(text, marker).map(str::to_owned);
    match result {
        Ok(Value::String(text)) => Ok(Value::String(opened(text).unwrap_or_else(|| text.clone()))),
        Ok(value) => Ok(value.clone()),
        Err(error) => {
            let mut error = error.clone();
            if let Some(message) = opened(&error.message) {
                error.message = message;
            }
            Err(error)
        }
    }
}

/// A call's tool and arguments, read (a call whose arguments cannot be read is never a
/// repeat: it gets its own error).
pub(super) fn key_of(call: &ModelCall) -> Option<Key> {
    let arguments: Value = serde_json::from_str(&call.arguments).ok()?;
    arguments
        .is_object()
        .then(|| (call.name.clone(), arguments))
}
