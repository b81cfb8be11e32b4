//! What a budget counts, how much of it, and over what: a run, or a caller's period.

use std::fmt;
use std::time::Duration;

/// What a [`Budget`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Measure {
    /// Tokens the model read (the prompts), as the provider reports them.
    InputTokens,
    /// Tokens the model wrote, as the provider reports them.
    OutputTokens,
    /// Tokens read and written.
    Tokens,
    /// Money: tokens priced by the registry's [`Prices`](super::Prices), in the prices'
    /// currency. Counted in millionths of it.
    Cost,
    /// Tool calls that ran (a call refused before it runs does not count).
    ToolCalls,
}

impl Measure {
    /// The measure's name in budget names and on the wire (`tokens`, `cost`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Measure::InputTokens => "input_tokens",
            Measure::OutputTokens => "output_tokens",
            Measure::Tokens => "tokens",
            Measure::Cost => "cost",
            Measure::ToolCalls => "tool_calls",
        }
    }

    /// Whether the measure is spent by model requests (rather than by tool calls).
    pub(crate) fn of_models(self) -> bool {
        self != Measure::ToolCalls
    }

    /// An amount counted in the store, as the measure's unit (millionths of money).
    pub(crate) fn shown(self, counted: u64) -> f64 {
        match self {
            Measure::Cost => counted as f64 / MICROS,
            _ => counted as f64,
        }
    }
}

/// Millionths of the prices' currency in one unit of it.
pub(crate) const MICROS: f64 = 1_000_000.0;

/// What a budget's count is kept for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// One agent run, over all its turns and resumptions.
    Run,
    /// One caller, per fixed period: periods start at multiples of its length since the
    /// Unix epoch (a day starts at midnight UTC), on every instance alike.
    Caller {
        /// The period's length.
        period: Duration,
    },
}

/// A ceiling on tokens, money or tool calls, for each agent run or for each caller per
/// period, added with [`RegistryBuilder::budget`](crate::RegistryBuilder::budget).
///
/// Counts are kept in the registry's budget store, so several instances on one database
/// share them. Before a model request or a tool call, its amount is *reserved* (a model
/// request's by an estimate), so of two parallel requests for the last unit only one passes;
/// once the provider reports what the request used, the count is *settled* to that. A
/// request is let through while anything is left, so the one that spends the budget may
/// pass its ceiling; the next is refused.
///
/// ```
/// use std::time::Duration;
/// use toolgate::budget::Budget;
///
/// const DAY: Duration = Duration::from_secs(86_400);
/// let per_run = Budget::tokens(50_000);
/// let per_day = Budget::cost(2.50).per_caller(DAY);
/// let calls = Budget::tool_calls(200).per_caller(DAY).named("daily_calls");
/// assert_eq!(per_run.name(), "tokens_per_run");
/// assert_eq!(per_day.name(), "cost_per_caller_per_1d");
/// assert_eq!(calls.name(), "daily_calls");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    measure: Measure,
    limit: u64,
    scope: Scope,
    name: String,
}

impl Budget {
    /// A budget of `limit` of `measure` per run (money in millionths: see [`Budget::cost`]).
    pub fn new(measure: Measure, limit: u64) -> Self {
        let mut budget = Budget {
            measure,
            limit,
            scope: Scope::Run,
            name: String::new(),
        };
        budget.name = budget.default_name();
        budget
    }

    /// `limit` tokens read and written, per run.
    pub fn tokens(limit: u64) -> Self {
        Budget::new(Measure::Tokens, limit)
    }

    /// `limit` tokens read, per run.
    pub fn input_tokens(limit: u64) -> Self {
        Budget::new(Measure::InputTokens, limit)
    }

    /// `limit` tokens written, per run.
    pub fn output_tokens(limit: u64) -> Self {
        Budget::new(Measure::OutputTokens, limit)
    }

    /// `limit` of the prices' currency, per run (a negative or unreadable amount is none).
    pub fn cost(limit: f64) -> Self {
        let micros = (limit * MICROS).round();
        let micros = if micros.is_finite() && micros > 0.0 {
            micros as u64
        } else {
            0
        };
        Budget::new(Measure::Cost, micros)
    }

    /// `limit` tool calls, per run.
    pub fn tool_calls(limit: u64) -> Self {
        Budget::new(Measure::ToolCalls, limit)
    }

    /// Counted per caller, per `period` (at least a second), instead of per run.
    pub fn per_caller(mut self, period: Duration) -> Self {
        let named_by_default = self.name == self.default_name();
        self.scope = Scope::Caller {
            period: period.max(Duration::from_secs(1)),
        };
        if named_by_default {
            self.name = self.default_name();
        }
        self
    }

    /// Names the budget (in statuses, events and audit records); the default says what it
    /// counts and over what, e.g. `tokens_per_run`, `cost_per_caller_per_1d`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The budget's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it counts.
    pub fn measure(&self) -> Measure {
        self.measure
    }

    /// What its count is kept for.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// Its ceiling, as counted (money in millionths).
    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn default_name(&self) -> String {
        match self.scope {
            Scope::Run => format!("{}_per_run", self.measure.name()),
            Scope::Caller { period } => {
                format!("{}_per_caller_per_{}", self.measure.name(), Period(period))
            }
        }
    }
}

/// A period as the largest whole unit that measures it: `1d`, `12h`, `90s`.
struct Period(Duration);

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs();
        let units = [(86_400, "d"), (3_600, "h"), (60, "m")];
        match units.iter().find(|(size, _)| secs.is_multiple_of(*size)) {
            Some((size, unit)) => write!(f, "{}{unit}", secs / size),
            None => write!(f, "{secs}s"),
        }
    }
}
