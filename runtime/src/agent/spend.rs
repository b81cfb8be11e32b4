//! The loop's side of the registry's [budgets](crate::budget): each model request reserves
//! an estimate of what it will use, settled to what the provider reports; a spent budget
//! stops the run, with an event and an audit record.

use serde_json::json;

use super::builder::Settings;
use super::message::Message;
use super::model::{ModelError, ModelReply};
use super::run::{Run, RunStatus};
use crate::budget::{BudgetExhausted, Refusal, Reservation};
use crate::events::EventKind;
use crate::registry::{LoopRecord, MODEL_REQUEST};
use crate::usage::Usage;

/// Bytes of text per token, for the estimate of a request's prompt.
const BYTES_PER_TOKEN: usize = 4;

/// Whether a budget counts what model requests use (else nothing is reserved).
pub(crate) fn counts(settings: &Settings) -> bool {
    settings.registry.governance().budgets.counts_models()
}

/// Reserves a request's estimate from the caller's and the run's budgets, or the status the
/// run stops with.
pub(crate) async fn reserve(
    settings: &Settings,
    run: &Run,
    system: Option<&str>,
) -> Result<Option<Reservation>, RunStatus> {
    let budgets = &settings.registry.governance().budgets;
    let estimate = Usage {
        input_tokens: prompt_bytes(system, &run.transcript).div_ceil(BYTES_PER_TOKEN) as u64,
        output_tokens: 0,
    };
    let model = model_name(settings);
    let who = (&run.caller, run.id.as_str());
    match budgets.reserve_request(who, model, estimate).await {
        Ok(reservation) => Ok(Some(reservation)),
        Err(Refusal::Exhausted(spent)) => Err(spent_budget(settings, run, spent).await),
        Err(Refusal::Unavailable(error)) => Err(RunStatus::Stopped {
            stage: "budgets".into(),
            reason: format!(
                "the budgets could not be checked ({error}); a budget that cannot be checked is not lifted"
            ),
        }),
        Err(Refusal::Unpriced) => Err(RunStatus::Stopped {
            stage: "budgets".into(),
            reason: format!(
                "a cost budget is set but the model `{model}` has no price: give one with RegistryBuilder::prices"
            ),
        }),
    }
}

/// Settles what a request reserved to what it used, or gives it back if it failed. (A
/// request cancelled or out of time before its answer is not settled: its estimate stays
/// counted.)
pub(crate) async fn settle(
    settings: &Settings,
    reservation: Reservation,
    reply: &Result<ModelReply, ModelError>,
) {
    let budgets = &settings.registry.governance().budgets;
    match reply {
        Ok(reply) => {
            budgets
                .settle(reservation, model_name(settings), reply.usage)
                .await
        }
        Err(_) => budgets.release(reservation).await,
    }
}

/// The run's status for a spent budget, its event published and its audit record written.
pub(crate) async fn spent_budget(
    settings: &Settings,
    run: &Run,
    spent: BudgetExhausted,
) -> RunStatus {
    tracing::info!(run = %run.id, caller = run.caller.id(), budget = %spent.budget, "a budget is spent; the run stops");
    super::driver::publish(settings, run, || EventKind::BudgetExhausted {
        budget: spent.budget.clone(),
        used: spent.used,
        limit: spent.limit,
    });
    let record = LoopRecord {
        call_id: format!("{}/turn-{}", run.id, run.turns),
        tool: MODEL_REQUEST.to_owned(),
        arguments: json!({
            "model": model_name(settings),
            "budget": spent.budget,
            "used": spent.used,
            "limit": spent.limit,
        }),
        decision: "budget_exhausted",
        outcome: "budget_exhausted".to_owned(),
    };
    settings
        .registry
        .record_from_loop(&run.caller, record)
        .await;
    stopped_by(spent)
}

/// The status of a run stopped by `spent`.
fn stopped_by(spent: BudgetExhausted) -> RunStatus {
    RunStatus::BudgetExhausted {
        budget: spent.budget,
        used: spent.used,
        limit: spent.limit,
    }
}

/// The status of a run one of whose calls was refused by a spent budget, if one was (its
/// event and record are the call's own).
pub(crate) fn spent_by_calls(results: &[super::message::ToolResult]) -> Option<RunStatus> {
    let mut errors = results
        .iter()
        .filter_map(|result| result.result.as_ref().err());
    errors.find_map(BudgetExhausted::from_error).map(stopped_by)
}

fn model_name(settings: &Settings) -> &str {
    settings.model.model_name().unwrap_or("")
}

/// The text a request sends: the system prompt and the conversation.
fn prompt_bytes(system: Option<&str>, transcript: &[Message]) -> usize {
    let messages: usize = transcript.iter().map(Message::text_bytes).sum();
    system.map_or(0, str::len) + messages
}
