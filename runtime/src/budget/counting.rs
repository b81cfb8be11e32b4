//! The registry's budgets at work: a tool call takes one from the call budgets before it
//! runs; a model request reserves an estimate from the token and cost budgets, settled to
//! what the provider reported.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::exhausted::BudgetExhausted;
use super::limit::{Budget, Measure, Scope};
use super::prices::Prices;
use super::store::{BudgetStore, MemoryBudgetStore};
use crate::caller::Caller;
use crate::error::ToolError;
use crate::store_error::{StoreError, unavailable};
use crate::usage::Usage;

/// How long a run's counts are kept after their last reservation.
const RUN_COUNTS_KEPT: Duration = Duration::from_secs(30 * 86_400);

/// The budgets of a registry, and where their counts are kept.
pub(crate) struct Budgets {
    budgets: Vec<Budget>,
    /// What the budgets count, known once they are added: every call's path asks.
    counts: Counts,
    pub(crate) prices: Prices,
    pub(crate) store: Arc<dyn BudgetStore>,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            budgets: Vec::new(),
            counts: Counts::default(),
            prices: Prices::default(),
            store: Arc::new(MemoryBudgetStore::default()),
        }
    }
}

/// Which kinds of thing some budget counts.
#[derive(Default, Clone, Copy)]
struct Counts {
    calls: bool,
    models: bool,
    cost: bool,
}

/// Why a reservation was refused.
pub(crate) enum Refusal {
    /// A budget has nothing left.
    Exhausted(BudgetExhausted),
    /// The store could not answer: a budget that cannot be checked is not lifted.
    Unavailable(StoreError),
    /// A cost budget is set, and the model has no price.
    Unpriced,
}

/// What a model request holds of its budgets until it is settled.
#[derive(Default)]
pub(crate) struct Reservation {
    held: Vec<(String, Measure, u64)>,
}

impl Budgets {
    pub(crate) fn add(&mut self, budget: Budget) {
        let measure = budget.measure();
        self.counts.calls |= !measure.of_models();
        self.counts.models |= measure.of_models();
        self.counts.cost |= measure == Measure::Cost;
        self.budgets.push(budget);
    }

    /// Whether a budget counts tool calls (the call's path then has a step for them).
    #[inline]
    pub(crate) fn counts_calls(&self) -> bool {
        self.counts.calls
    }

    /// Whether a budget counts what model requests use.
    pub(crate) fn counts_models(&self) -> bool {
        self.counts.models
    }

    /// Takes one call from each call budget of the caller (and of the run, if the call is
    /// one of a run's), or the error the call ends with.
    pub(crate) async fn take_call(
        &self,
        caller: &Caller,
        run: Option<&str>,
    ) -> Result<(), ToolError> {
        let one = |measure: Measure| (measure == Measure::ToolCalls).then_some(1);
        match self.reserve(caller, run, one).await {
            Ok(_) => Ok(()),
            Err(Refusal::Exhausted(exhausted)) => Err(exhausted.to_error()),
            Err(Refusal::Unavailable(error)) => Err(unavailable(error)),
            // Calls have no price: never asked for one.
            Err(Refusal::Unpriced) => Ok(()),
        }
    }

    /// Reserves what a model request is estimated to use from each token and cost budget
    /// of the caller and the run.
    pub(crate) async fn reserve_request(
        &self,
        (caller, run): (&Caller, &str),
        model: &str,
        estimate: Usage,
    ) -> Result<Reservation, Refusal> {
        if self.counts.cost && self.prices.price_of(model).is_none() {
            return Err(Refusal::Unpriced);
        }
        let amount = |measure: Measure| self.amount(measure, model, estimate).map(|n| n.max(1));
        self.reserve(caller, Some(run), amount).await
    }

    /// Settles a request's reservation to what it used, as the provider reported it (a
    /// provider that reported nothing leaves the estimate counted). A store that fails
    /// here loses the correction, which is logged.
    pub(crate) async fn settle(&self, reservation: Reservation, model: &str, used: Usage) {
        let reported = used != Usage::default();
        for (key, measure, reserved) in reservation.held {
            let actual = match reported {
                true => self.amount(measure, model, used).unwrap_or(reserved),
                false => reserved,
            };
            let change = actual as i64 - reserved as i64;
            self.change(&key, change).await;
        }
    }

    /// Gives back what a request reserved and did not use (it failed, or was cancelled).
    pub(crate) async fn release(&self, reservation: Reservation) {
        for (key, _, reserved) in reservation.held {
            self.change(&key, -(reserved as i64)).await;
        }
    }

    async fn change(&self, key: &str, change: i64) {
        if change == 0 {
            return;
        }
        if let Err(error) = self.store.settle(key, change).await {
            tracing::error!(%error, key, "a budget's count could not be settled");
        }
    }

    /// What a request that used `usage` spends of `measure`.
    fn amount(&self, measure: Measure, model: &str, usage: Usage) -> Option<u64> {
        match measure {
            Measure::InputTokens => Some(usage.input_tokens),
            Measure::OutputTokens => Some(usage.output_tokens),
            Measure::Tokens => Some(usage.input_tokens + usage.output_tokens),
            Measure::Cost => Some(self.prices.price_of(model)?.of(usage)),
            Measure::ToolCalls => None,
        }
    }

    /// Reserves `amount_of` each budget's measure (those it gives an amount for), all or
    /// none: what was reserved before a refusal is given back.
    async fn reserve(
        &self,
        caller: &Caller,
        run: Option<&str>,
        amount_of: impl Fn(Measure) -> Option<u64>,
    ) -> Result<Reservation, Refusal> {
        let mut reservation = Reservation::default();
        for budget in &self.budgets {
            let Some(amount) = amount_of(budget.measure()) else {
                continue;
            };
            let Some((key, expires_ms)) = count_of(budget, caller, run) else {
                continue;
            };
            let answer = self
                .store
                .reserve(&key, amount, budget.limit(), expires_ms)
                .await;
            let refusal = match answer {
                Ok(Ok(_)) => {
                    reservation.held.push((key, budget.measure(), amount));
                    continue;
                }
                Ok(Err(used)) => Refusal::Exhausted(BudgetExhausted::of(budget, used)),
                Err(error) => Refusal::Unavailable(error),
            };
            self.release(reservation).await;
            return Err(refusal);
        }
        Ok(reservation)
    }
}

/// The key of the count `budget` keeps for this caller or run, and until when it is kept;
/// none for a run's budget when the call is not one of a run's.
fn count_of(budget: &Budget, caller: &Caller, run: Option<&str>) -> Option<(String, u64)> {
    let now = crate::util::time::now_millis();
    let measure = budget.measure().name();
    match budget.scope() {
        Scope::Run => {
            let key = json!(["run", run?, measure]).to_string();
            Some((key, now + RUN_COUNTS_KEPT.as_millis() as u64))
        }
        Scope::Caller { period } => {
            let period_ms = period.as_millis().max(1) as u64;
            let window = now / period_ms * period_ms;
            let who = json!([caller.issuer(), caller.recorded_id().as_str()]);
            let key = json!(["caller", who, measure, period_ms, window]).to_string();
            Some((key, window + period_ms))
        }
    }
}
