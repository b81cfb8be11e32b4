//! The loop: ask the model, run the calls it asks for, feed the results back, until it
//! answers, a call waits for a person, or a limit is reached.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::AgentError;
use super::RunOptions;
use super::builder::Settings;
use super::envelope;
use super::message::{Message, ModelCall, ToolResult};
use super::model::{Delta, ModelError, ModelReply, ModelRequest};
use super::plan::{self, Plan};
use super::run::{CallRecord, PendingApproval, Run, RunStatus, Slot};
use super::spend;
use super::stage::{self, ModelTurn};
use crate::audit::redact;
use crate::call::{ToolCall, ToolOutcome};
use crate::content::Content;
use crate::context::CancellationToken;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::events::EventKind;
use crate::registry::{BatchOptions, LoopRecord};
use crate::util::bounded::clip;

/// Runs turns until the run stops, keeps it in the store, and reports its end: in the
/// run's span, where the registry has telemetry.
pub(crate) async fn drive(
    settings: &Settings,
    run: Run,
    options: &RunOptions,
) -> Result<Run, AgentError> {
    #[cfg(feature = "otel")]
    if let Some(telemetry) = settings.registry.telemetry() {
        use opentelemetry::context::FutureExt as _;
        let span = super::traced::run_span(telemetry, &*settings.model, &run);
        let driven = drive_run(settings, run, options)
            .with_context(span.context().clone())
            .await;
        super::traced::run_ended(span, &driven);
        return driven;
    }
    drive_run(settings, run, options).await
}

/// [`drive`], in whatever span is current.
async fn drive_run(
    settings: &Settings,
    mut run: Run,
    options: &RunOptions,
) -> Result<Run, AgentError> {
    let cancel = options.cancel.clone().unwrap_or_default();
    let deadline = settings.time_budget.map(|budget| Instant::now() + budget);
    run.status = loop {
        if let Some(status) = limit_before_turn(settings, &run, &cancel, deadline) {
            break status;
        }
        match turn(settings, &mut run, &cancel, deadline).await {
            Some(status) => break status,
            None => continue,
        }
    };
    finish(settings, run).await
}

/// Keeps the run and reports its status. A run that cannot be kept is an error: its caller
/// could not go on with it.
pub(crate) async fn finish(settings: &Settings, run: Run) -> Result<Run, AgentError> {
    settings
        .store
        .put(run.clone())
        .await
        .map_err(AgentError::Store)?;
    let status = serde_json::to_value(&run.status).unwrap_or(Value::Null);
    publish(settings, &run, || EventKind::RunFinished { status });
    Ok(run)
}

fn limit_before_turn(
    settings: &Settings,
    run: &Run,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Option<RunStatus> {
    if cancel.is_cancelled() {
        return Some(RunStatus::Cancelled);
    }
    if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
        return Some(time_budget(settings));
    }
    (run.exchange_turns >= settings.max_turns).then_some(RunStatus::MaxTurns {
        turns: settings.max_turns,
    })
}

fn time_budget(settings: &Settings) -> RunStatus {
    let budget = settings.time_budget.unwrap_or_default();
    RunStatus::TimeBudget {
        budget_ms: budget.as_millis() as u64,
    }
}

/// One turn: the model's reply, then its calls. `None` when the loop goes on.
async fn turn(
    settings: &Settings,
    run: &mut Run,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Option<RunStatus> {
    run.turns += 1;
    run.exchange_turns += 1;
    let reply = match ask_model(settings, run, cancel, deadline).await {
        Ok(reply) => reply,
        Err(status) => return Some(status),
    };
    run.usage += reply.usage;
    run.only_repeats = false;
    let ModelReply {
        text,
        calls,
        correction,
        cut_off,
        ..
    } = reply;
    run.transcript.push(Message::Assistant {
        text: text.clone(),
        calls: calls.clone(),
    });
    if let Some(correction) = correction {
        run.transcript.push(Message::User { text: correction });
        return None;
    }
    if calls.is_empty() {
        let text = text.unwrap_or_default();
        return Some(match cut_off {
            true => RunStatus::CutOff { text },
            false => RunStatus::Finished { text },
        });
    }
    run_calls(settings, run, (calls, cut_off), cancel, deadline).await
}

/// Asks the model, unless cancelled or out of time first.
async fn ask_model(
    settings: &Settings,
    run: &Run,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<ModelReply, RunStatus> {
    let tools = tools_for_turn(settings, run);
    let turn = run.turns;
    let seen = ModelTurn {
        caller: &run.caller,
        run_id: &run.id,
        turn,
        transcript: &run.transcript,
        tools: &tools,
        usage: run.usage,
    };
    stage::before_request(&settings.stages, &seen)?;
    let system = system_prompt(settings, run, &tools);
    // Boxed: most agents have no budget, and their every turn's future stays small.
    let reservation = match spend::counts(settings) {
        true => Box::pin(spend::reserve(settings, run, system.as_deref())).await?,
        false => None,
    };
    publish(settings, run, || EventKind::ModelRequest {
        turn,
        tools: tools.len(),
    });
    let on_delta = |delta: Delta| publish(settings, run, || delta_event(turn, delta));
    let messages = with_examples(settings, &run.transcript, &tools);
    let request = ModelRequest {
        system: system.as_deref(),
        messages: &messages,
        tools: &tools,
        on_delta: Some(&on_delta),
    };
    let reply = tokio::select! {
        reply = respond(settings, request) => reply,
        _ = cancel.cancelled() => return Err(RunStatus::Cancelled),
        _ = sleep_until(deadline) => return Err(time_budget(settings)),
    };
    if let Some(reservation) = reservation {
        Box::pin(spend::settle(settings, reservation, &reply)).await;
    }
    let mut reply = reply.map_err(|error| model_failed(run, error))?;
    stage::after_response(&settings.stages, &seen, &mut reply)?;
    publish(settings, run, || EventKind::ModelResponse {
        turn,
        text: reply.text.clone(),
        calls: reply.calls.iter().map(|call| call.name.clone()).collect(),
        usage: reply.usage,
    });
    Ok(reply)
}

/// The model's reply to `request`: in a span of its own, where the registry has telemetry.
async fn respond(settings: &Settings, request: ModelRequest<'_>) -> Result<ModelReply, ModelError> {
    #[cfg(feature = "otel")]
    if let Some(telemetry) = settings.registry.telemetry() {
        use opentelemetry::context::FutureExt as _;
        let model = &*settings.model;
        let span = super::traced::chat_span(telemetry, model);
        let started = std::time::Instant::now();
        let reply = model
            .respond(request)
            .with_context(span.context().clone())
            .await;
        super::traced::chat_ended(telemetry, span, model, (&reply, started.elapsed()));
        return reply;
    }
    settings.model.respond(request).await
}

fn model_failed(run: &Run, error: ModelError) -> RunStatus {
    tracing::warn!(run = %run.id, caller = run.caller.id(), error = %error, "the model could not be asked; the run stops");
    RunStatus::ModelFailed { error }
}

fn delta_event(turn: u32, delta: Delta) -> EventKind {
    match delta {
        Delta::Text(text) => EventKind::TextDelta { turn, text },
        Delta::ToolCall {
            index,
            id,
            name,
            arguments,
        } => EventKind::ToolCallDelta {
            turn,
            index,
            id,
            name,
            arguments,
        },
    }
}

/// The caller's tools, narrowed by the selector (which may not add any); none after a turn
/// whose every call was a repeat.
fn tools_for_turn(settings: &Settings, run: &Run) -> Vec<Arc<ToolDefinition>> {
    // A model that only repeated calls has its answers: it is asked for its answer.
    if run.only_repeats {
        return Vec::new();
    }
    let visible = settings.registry.visible_to(&run.caller);
    let Some(selector) = &settings.selector else {
        return visible.to_vec();
    };
    let mut chosen = selector.select(&run.caller, &run.transcript, &visible);
    chosen.retain(|tool| visible.iter().any(|shown| shown.name == tool.name));
    chosen.dedup_by(|a, b| a.name == b.name);
    chosen
}

/// Runs the turn's calls through the registry as the run's caller: one result per call, in
/// order. Calls over the run's limit do not run; repeats are answered from the result they
/// repeat.
async fn run_calls(
    settings: &Settings,
    run: &mut Run,
    (calls, cut_off): (Vec<ModelCall>, bool),
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Option<RunStatus> {
    let (outcomes, plans, over_limit, out_of_time) =
        outcomes(settings, run, (&calls, cut_off), (cancel, deadline)).await;
    if plans.iter().any(|plan| *plan != Plan::Run) {
        Box::pin(record_answered_here(
            settings,
            run,
            (&calls, &plans),
            &outcomes,
        ))
        .await;
    }
    run.only_repeats = plans
        .iter()
        .all(|plan| matches!(plan, Plan::Earlier(..) | Plan::SameTurnAs(_)));
    let slots: Vec<Slot> = calls
        .iter()
        .zip(outcomes)
        .map(|(call, outcome)| slot(settings, run, call, outcome))
        .collect();
    if slots.iter().any(|slot| matches!(slot, Slot::Waiting(_))) {
        let pending = waiting_calls(&slots);
        run.waiting = slots;
        return Some(RunStatus::NeedsApproval { pending });
    }
    let results: Vec<_> = slots
        .into_iter()
        .filter_map(|slot| match slot {
            Slot::Done(result) => Some(result),
            Slot::Waiting(_) => None,
        })
        .collect();
    let spent = spend::spent_by_calls(&results);
    run.transcript.push(Message::ToolResults { results });
    if spent.is_some() {
        return spent;
    }
    if out_of_time {
        return Some(time_budget(settings));
    }
    if cancel.is_cancelled() {
        return Some(RunStatus::Cancelled);
    }
    over_limit.then_some(RunStatus::ToolCallLimit {
        calls: settings.max_tool_calls,
    })
}

/// One outcome per call, in order, and how each was answered: segment by segment (see
/// [`plan`]), the calls to run go through the registry (those over the run's limit do not
/// run), repeats take the result they repeat. Also whether calls went over the limit, and
/// whether time ran out.
async fn outcomes(
    settings: &Settings,
    run: &mut Run,
    (calls, cut_off): (&[ModelCall], bool),
    (cancel, deadline): (&CancellationToken, Option<Instant>),
) -> (Vec<ToolOutcome>, Vec<Plan>, bool, bool) {
    let mut outcomes: Vec<ToolOutcome> = Vec::with_capacity(calls.len());
    let mut plans = Vec::with_capacity(calls.len());
    let (mut over_limit, mut out_of_time) = (false, false);
    while outcomes.len() < calls.len() {
        let place = (outcomes.len(), cut_off);
        let (range, segment) = plan::segment(settings, run, (calls, &outcomes), place);
        let to_run: Vec<&ModelCall> = calls[range.clone()]
            .iter()
            .zip(&segment)
            .filter(|(_, plan)| **plan == Plan::Run)
            .map(|(call, _)| call)
            .collect();
        let room = settings.max_tool_calls.saturating_sub(run.exchange_calls);
        over_limit |= to_run.len() > room;
        let (allowed, refused) = to_run.split_at(room.min(to_run.len()));
        run.exchange_calls += allowed.len();
        let batch: Vec<ToolCall> = allowed.iter().map(|call| call.to_tool_call()).collect();
        let (ran, late) = run_batch(settings, run, batch, cancel, deadline).await;
        out_of_time |= late;
        let refused = refused.iter().map(|call| over_the_limit(settings, call));
        let mut ran = ran.into_iter().chain(refused);
        for (call, plan) in calls[range].iter().zip(&segment) {
            let outcome = match plan {
                Plan::Run => ran.next().unwrap_or_else(|| over_the_limit(settings, call)),
                Plan::Earlier(first, result) => plan::answered_from(call, first, result.clone()),
                Plan::SameTurnAs(index) => plan::same_as(call, &outcomes[*index]),
                Plan::CutOff => plan::cut_off(call),
            };
            outcomes.push(outcome);
        }
        plans.extend(segment);
    }
    (outcomes, plans, over_limit, out_of_time)
}

/// Audits the calls the loop answered itself (they did not reach the registry): repeats,
/// and calls cut off.
async fn record_answered_here(
    settings: &Settings,
    run: &Run,
    (calls, plans): (&[ModelCall], &[Plan]),
    outcomes: &[ToolOutcome],
) {
    let answered = calls.iter().zip(plans).zip(outcomes);
    for ((call, plan), outcome) in answered.filter(|((_, plan), _)| **plan != Plan::Run) {
        let record = LoopRecord {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: shown_arguments(settings, run, &call.name, &call.arguments),
            decision: match plan {
                Plan::CutOff => "not_reached",
                _ => "repeated",
            },
            outcome: outcome
                .error()
                .map_or_else(|| "ok".to_owned(), |error| error.code.as_str().to_owned()),
        };
        settings
            .registry
            .record_from_loop(&run.caller, record)
            .await;
    }
}

/// The batch, cancelled (not dropped: every call still gets its outcome) when the time
/// budget runs out. Also says whether it did.
async fn run_batch(
    settings: &Settings,
    run: &Run,
    calls: Vec<ToolCall>,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> (Vec<ToolOutcome>, bool) {
    if calls.is_empty() {
        return (Vec::new(), false);
    }
    let batch_cancel = cancel.child_token();
    let options = BatchOptions {
        cancel: Some(batch_cancel.clone()),
        run_id: Some(run.id.to_string()),
        front: crate::FrontEnd::Agent,
        ..BatchOptions::default()
    };
    let mut batch = pin!(
        settings
            .registry
            .run_batch_with(&run.caller, calls, options)
    );
    tokio::select! {
        outcomes = &mut batch => (outcomes, false),
        _ = sleep_until(deadline) => {
            batch_cancel.cancel();
            (batch.await, true)
        }
    }
}

/// The error code of a call that did not run because the request reached its limit.
pub(crate) const TOOL_CALL_LIMIT: &str = "tool_call_limit";

fn over_the_limit(settings: &Settings, call: &ModelCall) -> ToolOutcome {
    let error = ToolError::new(
        TOOL_CALL_LIMIT,
        format!(
            "not run: this request reached its limit of {} tool calls",
            settings.max_tool_calls
        ),
    );
    ToolOutcome {
        call_id: call.id.as_str().into(),
        tool: call.name.as_str().into(),
        result: Err(error),
        duration: Duration::ZERO,
        ui: None,
        is_content: false,
    }
}

/// A call's place in the turn: its result (recorded), or a call waiting for a person.
fn slot(settings: &Settings, run: &mut Run, call: &ModelCall, outcome: ToolOutcome) -> Slot {
    let arguments = shown_arguments(settings, run, &call.name, &call.arguments);
    if let Some(waiting) = waiting_for_approval(&outcome, &arguments) {
        return Slot::Waiting(waiting);
    }
    let result = record(settings, run, arguments, outcome);
    Slot::Done(result)
}

/// The result the model reads, cut to size, and the call's record.
pub(crate) fn record(
    settings: &Settings,
    run: &mut Run,
    arguments: Value,
    outcome: ToolOutcome,
) -> ToolResult {
    let limits = &settings.result_limits;
    let is_content = outcome.is_content;
    let result = ToolResult {
        call_id: outcome.call_id.to_string(),
        tool: outcome.tool.to_string(),
        result: outcome.result.map(|value| match is_content {
            true => bound_blocks(value, limits),
            false => cut_to_size(value, limits.max_text_bytes),
        }),
        is_content,
    };
    run.calls.push(CallRecord {
        turn: run.turns,
        call_id: result.call_id.clone(),
        tool: result.tool.clone(),
        arguments,
        result: result.result.clone(),
        duration_ms: crate::util::time::millis(outcome.duration),
    });
    in_envelope_if_untrusted(settings, run, result)
}

/// The result as the model is to read it: in the run's envelope where its tool's results
/// come from outside (see `envelope`); the run's record keeps it as it was.
fn in_envelope_if_untrusted(
    settings: &Settings,
    run: &mut Run,
    mut result: ToolResult,
) -> ToolResult {
    let untrusted = settings
        .registry
        .definition(&run.caller, &result.tool)
        .is_some_and(|definition| definition.results_untrusted());
    if untrusted {
        let (answer, is_content) = (
            std::mem::replace(&mut result.result, Ok(Value::Null)),
            result.is_content,
        );
        result.result = envelope::enveloped(answer, is_content, &run.marker);
        run.enveloped = true;
    }
    result
}

/// The conversation as the model is shown it: the agent's examples whose tools are all
/// offered this turn (an example must not tell of a tool the caller may not see), then the
/// run's transcript.
fn with_examples<'t>(
    settings: &Settings,
    transcript: &'t [Message],
    tools: &[Arc<ToolDefinition>],
) -> std::borrow::Cow<'t, [Message]> {
    let offered = |name: &String| tools.iter().any(|tool| &tool.name == name);
    let shown: Vec<Message> = (settings.examples.iter())
        .filter(|(calls, _)| calls.iter().all(offered))
        .flat_map(|(_, messages)| messages.iter().cloned())
        .collect();
    if shown.is_empty() {
        return std::borrow::Cow::Borrowed(transcript);
    }
    std::borrow::Cow::Owned(
        shown
            .into_iter()
            .chain(transcript.iter().cloned())
            .collect(),
    )
}

/// The system prompt of a turn: the application's, and what envelopes are where the model
/// may read one (a tool offered whose results come from outside, or one read already).
fn system_prompt(settings: &Settings, run: &Run, tools: &[Arc<ToolDefinition>]) -> Option<String> {
    let enveloping = run.enveloped || tools.iter().any(|tool| tool.results_untrusted());
    let base = settings.system.as_deref();
    match (base, enveloping) {
        (base, false) => base.map(str::to_owned),
        (None, true) => Some(envelope::system_line(&run.marker)),
        (Some(base), true) => Some(format!("{base}\n\n{}", envelope::system_line(&run.marker))),
    }
}

/// A result whose text is longer than `max` bytes becomes that text, cut, with a marker.
fn cut_to_size(value: Value, max: usize) -> Value {
    let text = match &value {
        Value::String(text) if text.len() <= max => return value,
        Value::String(text) => text.clone(),
        other => {
            let text = other.to_string();
            if text.len() <= max {
                return value;
            }
            text
        }
    };
    Value::String(clip(&text, max).into_owned())
}

/// Content blocks within the agent's bounds (the registry checked them already; a result
/// that is not blocks after all is cut as text).
fn bound_blocks(value: Value, limits: &crate::ResultLimits) -> Value {
    match serde_json::from_value::<Vec<Content>>(value) {
        Ok(blocks) => {
            let blocks = crate::result_limits::bound(blocks, limits);
            serde_json::to_value(blocks).unwrap_or(Value::Null)
        }
        Err(error) => Value::String(format!("[the tool's content could not be read: {error}]")),
    }
}

/// The arguments as the model wrote them, secrets redacted, for records and approvers.
pub(crate) fn shown_arguments(settings: &Settings, run: &Run, tool: &str, text: &str) -> Value {
    let Ok(arguments) = serde_json::from_str::<Value>(text) else {
        return Value::Null;
    };
    match settings.registry.definition(&run.caller, tool) {
        Some(definition) => redact(&arguments, &definition.secret_arguments),
        None => arguments,
    }
}

/// The waiting call, if the registry kept it for a person's decision.
pub(crate) fn waiting_for_approval(
    outcome: &ToolOutcome,
    arguments: &Value,
) -> Option<PendingApproval> {
    let error = outcome.error()?;
    if error.code != ErrorCode::ApprovalRequired {
        return None;
    }
    let details = error.details.as_ref()?;
    let text = |key: &str| details.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(PendingApproval {
        call_id: outcome.call_id.to_string(),
        tool: outcome.tool.to_string(),
        arguments: arguments.clone(),
        reason: text("reason").unwrap_or_default(),
        ticket: text("ticket")?,
        ticket_id: text("ticket_id")?,
        expires: details.get("expires").and_then(Value::as_u64).unwrap_or(0),
    })
}

pub(crate) fn waiting_calls(slots: &[Slot]) -> Vec<PendingApproval> {
    slots
        .iter()
        .filter_map(|slot| match slot {
            Slot::Waiting(waiting) => Some(waiting.clone()),
            Slot::Done(_) => None,
        })
        .collect()
}

pub(crate) fn publish(settings: &Settings, run: &Run, kind: impl FnOnce() -> EventKind) {
    settings.registry.publish(|| {
        let run_id = Some(run.id.to_string());
        (run.caller.id().to_owned(), run_id, kind())
    });
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
