//! How each call of a turn is answered: most run; a call the model repeats is answered from
//! its first result; a call cut off at the model's output limit is refused.
//!
//! A read-only tool called again with the same arguments in the same run is answered from
//! its first result, with a note saying so, instead of running again (small models repeat a
//! call they have the answer to, turn after turn). Only while nothing that may change
//! something has been called since, and only for tools the caller may still use as
//! read-only now.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::builder::Settings;
use super::message::{Message, ModelCall};
use super::run::Run;
use crate::call::ToolOutcome;
use crate::error::{ErrorCode, ToolError};

/// How one call of a turn is answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    /// It runs.
    Run,
    /// From an earlier turn's result: the call's id, and its result as the model read it.
    Earlier(String, Value),
    /// As the earlier call of this turn at this index is.
    SameTurnAs(usize),
    /// Not at all: the model stopped at its output limit before its arguments ended.
    CutOff,
}

/// A call as compared: the tool and its arguments, read.
type Key = (String, Value);

/// How each of `calls` is answered. A reply `cut_off` at the output limit has the calls
/// whose arguments cannot be read refused as such.
pub(crate) fn plan(
    settings: &Settings,
    run: &Run,
    calls: &[ModelCall],
    cut_off: bool,
) -> Vec<Plan> {
    let mut plans = repeats(settings, run, calls);
    if cut_off {
        for (plan, call) in plans.iter_mut().zip(calls) {
            if key_of(call).is_none() {
                *plan = Plan::CutOff;
            }
        }
    }
    plans
}

/// Which of `calls` repeat an earlier one: none unless every one is of a read-only tool.
fn repeats(settings: &Settings, run: &Run, calls: &[ModelCall]) -> Vec<Plan> {
    let read_only = |name: &str| {
        let definition = settings.registry.definition(&run.caller, name);
        definition.is_some_and(|definition| definition.hints.read_only)
    };
    if !calls.iter().all(|call| read_only(&call.name)) {
        return vec![Plan::Run; calls.len()];
    }
    let mut earlier = answered((&run.transcript, &run.marker), read_only);
    let mut this_turn: HashMap<Key, usize> = HashMap::new();
    let mut plans = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        let Some(key) = key_of(call) else {
            plans.push(Plan::Run);
            continue;
        };
        if let Some(&first) = this_turn.get(&key) {
            plans.push(Plan::SameTurnAs(first));
        } else if let Some((id, value)) = earlier.remove(&key) {
            plans.push(Plan::Earlier(id.clone(), value.clone()));
            earlier.insert(key, (id, value));
        } else {
            this_turn.insert(key, index);
            plans.push(Plan::Run);
        }
    }
    plans
}

/// The successful results of read-only calls in `transcript` since the last call of a tool
/// that may change something, by call.
fn answered(
    (transcript, marker): (&[Message], &str),
    read_only: impl Fn(&str) -> bool,
) -> HashMap<Key, (String, Value)> {
    let mut answered = HashMap::new();
    let mut asked: HashMap<&str, Key> = HashMap::new();
    for message in transcript {
        match message {
            Message::Assistant { calls, .. } => {
                if !calls.iter().all(|call| read_only(&call.name)) {
                    answered.clear();
                }
                asked = calls
                    .iter()
                    .filter_map(|call| Some((call.id.as_str(), key_of(call)?)))
                    .collect();
            }
            Message::ToolResults { results } => {
                for result in results.iter().filter(|result| !result.is_content) {
                    let (Some(key), Ok(value)) =
                        (asked.remove(result.call_id.as_str()), &result.result)
                    else {
                        continue;
                    };
                    answered
                        .entry(key)
                        .or_insert_with(|| (result.call_id.clone(), unwrapped(value, marker)));
                }
            }
            Message::User { .. } => {}
        }
    }
    answered
}

/// A result as its tool gave it, out of the run's envelope if it was sent in one (its
/// repeat is enveloped again, once).
fn unwrapped(value: &Value, marker: &str) -> Value {
    match value
        .as_str()
        .and_then(|text| super::envelope::opened(text, marker))
    {
        Some(inside) => Value::String(inside.to_owned()),
        None => value.clone(),
    }
}

/// A call's tool and arguments, read (a call whose arguments cannot be read is never a
/// repeat: it gets its own error).
fn key_of(call: &ModelCall) -> Option<Key> {
    let arguments: Value = serde_json::from_str(&call.arguments).ok()?;
    arguments
        .is_object()
        .then(|| (call.name.clone(), arguments))
}

/// The outcome of `call`, answered from an earlier call's result (`first`, its id).
pub(crate) fn answered_from(call: &ModelCall, first: &str, result: Value) -> ToolOutcome {
    let note = format!(
        "the same call as `{first}` earlier in this run: this is its result, and calling it again gives the same; answer from it"
    );
    outcome(call, Ok(json!({"note": note, "result": result})))
}

/// The outcome of `call`, a repeat within one turn of the call that came to `first`.
pub(crate) fn same_as(call: &ModelCall, first: &ToolOutcome) -> ToolOutcome {
    let result = match &first.result {
        Ok(_) if first.is_content => Ok(first.result.clone().unwrap_or_default()),
        Ok(value) => Ok(json!({
            "note": format!("the same call as `{}` of this turn: this is its result", first.call_id),
            "result": value,
        })),
        Err(error) if error.code == ErrorCode::ApprovalRequired => Err(ToolError::new(
            "repeated_call",
            format!(
                "not run: the same call as `{}` of this turn, which waits for approval",
                first.call_id
            ),
        )),
        Err(error) => Err(error.clone()),
    };
    let mut outcome = outcome(call, result);
    outcome.is_content = first.is_content && first.result.is_ok();
    outcome
}

/// The outcome of a call cut off at the model's output limit: not run, and why.
pub(crate) fn cut_off(call: &ModelCall) -> ToolOutcome {
    let error = ToolError::new(
        CUT_OFF,
        "not run: your reply stopped at the output limit before this call's arguments ended; call it again, with shorter arguments and fewer calls at once",
    );
    outcome(call, Err(error))
}

/// The error code of a call cut off at the model's output limit.
pub(crate) const CUT_OFF: &str = "cut_off";

fn outcome(call: &ModelCall, result: Result<Value, ToolError>) -> ToolOutcome {
    ToolOutcome {
        call_id: call.id.as_str().into(),
        tool: call.name.as_str().into(),
        result,
        duration: Duration::ZERO,
        ui: None,
        is_content: false,
    }
}
