//! What a run or call that reached a budget is told.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::limit::Budget;
use crate::error::{ErrorCode, ToolError};

/// A budget that has nothing left: a run's status
/// ([`RunStatus::BudgetExhausted`](crate::agent::RunStatus::BudgetExhausted)), an event, an
/// audit record, and the `details` of a tool call's
/// [`BudgetExhausted`](crate::ErrorCode::BudgetExhausted) error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetExhausted {
    /// The budget's [name](super::Budget::name).
    pub budget: String,
    /// What was used of it (money in the prices' currency).
    pub used: f64,
    /// Its ceiling, in the same unit.
    pub limit: f64,
}

impl BudgetExhausted {
    pub(crate) fn of(budget: &Budget, used: u64) -> Self {
        let measure = budget.measure();
        BudgetExhausted {
            budget: budget.name().to_owned(),
            used: measure.shown(used),
            limit: measure.shown(budget.limit()),
        }
    }

    /// The error a tool call refused by this budget ends with.
    pub(crate) fn to_error(&self) -> ToolError {
        ToolError::new(
            ErrorCode::BudgetExhausted,
            format!(
                "not run: the budget `{}` is spent ({} of {} used)",
                self.budget, self.used, self.limit
            ),
        )
        .with_details(json!({"budget": self.budget, "used": self.used, "limit": self.limit}))
    }

    /// The budget a call's error says was spent, if it says so.
    pub fn from_error(error: &ToolError) -> Option<Self> {
        if error.code != ErrorCode::BudgetExhausted {
            return None;
        }
        serde_json::from_value(error.details.clone()?).ok()
    }
}
