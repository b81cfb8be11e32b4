//! Budgets: ceilings on the tokens, money and tool calls an agent run or a caller per
//! period may spend, counted in a store that every instance of an application shares.
//!
//! A [`Budget`] is added to the registry
//! ([`RegistryBuilder::budget`](crate::RegistryBuilder::budget)), with the models' prices
//! for money ([`RegistryBuilder::prices`](crate::RegistryBuilder::prices)). Tool-call
//! budgets are a step of every call's path, after the call is authorized and before it
//! runs; token and cost budgets are a step of the agent loop, around each model request.
//! What reaches a budget ends with [`BudgetExhausted`]: a call's error
//! ([`ErrorCode::BudgetExhausted`](crate::ErrorCode::BudgetExhausted)), a run's status, a
//! `budget_exhausted` event, and an audit record.
//!
//! ```
//! use std::time::Duration;
//! use toolgate::budget::{Budget, Price, Prices};
//!
//! const DAY: Duration = Duration::from_secs(86_400);
//! let registry = toolgate::Registry::builder()
//!     .roles(["user"])
//!     .linked_tools(false)
//!     .budget(Budget::tokens(20_000))
//!     .budget(Budget::cost(1.00).per_caller(DAY))
//!     .budget(Budget::tool_calls(100).per_caller(DAY))
//!     .prices(Prices::new().model("gpt-4o-mini", Price::per_million_tokens(0.15, 0.60)))
//!     .build()
//!     .unwrap();
//! # let _ = registry;
//! ```

mod counting;
mod exhausted;
mod limit;
mod prices;
mod store;

pub(crate) use counting::{Budgets, Refusal, Reservation};
pub use exhausted::BudgetExhausted;
pub use limit::{Budget, Measure, Scope};
pub use prices::{Price, Prices};
pub use store::{BudgetStore, MemoryBudgetStore};
