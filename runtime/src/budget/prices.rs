//! What a model's tokens cost: the application's price table, per model.

use std::collections::HashMap;

use crate::usage::Usage;

/// What one model's tokens cost, per million, in the application's currency.
///
/// ```
/// use toolgate::budget::Price;
///
/// let mini = Price::per_million_tokens(0.15, 0.60);
/// # let _ = mini;
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    input: f64,
    output: f64,
}

impl Price {
    /// `input` per million tokens read, `output` per million written (negative or
    /// unreadable prices count as zero).
    pub fn per_million_tokens(input: f64, output: f64) -> Self {
        let sane = |price: f64| {
            if price.is_finite() {
                price.max(0.0)
            } else {
                0.0
            }
        };
        Price {
            input: sane(input),
            output: sane(output),
        }
    }

    /// What `usage` costs, in millionths of the currency (rounded up: a request that used
    /// anything costs something).
    pub(crate) fn of(&self, usage: Usage) -> u64 {
        // A price per million tokens is, per token, that many millionths.
        let micros =
            usage.input_tokens as f64 * self.input + usage.output_tokens as f64 * self.output;
        micros.ceil() as u64
    }
}

/// The prices of the models an application's agents use, for [cost
/// budgets](super::Budget::cost); given with
/// [`RegistryBuilder::prices`](crate::RegistryBuilder::prices). A model is found by the
/// name its [`Model::model_name`](crate::agent::Model::model_name) gives, else the
/// fallback price if there is one. An agent whose model has no price cannot be built while
/// a cost budget is set.
///
/// ```
/// use toolgate::budget::{Price, Prices};
///
/// let prices = Prices::new()
///     .model("gpt-4o-mini", Price::per_million_tokens(0.15, 0.60))
///     .model("claude-sonnet-4-5", Price::per_million_tokens(3.00, 15.00));
/// assert!(prices.price_of("gpt-4o-mini").is_some());
/// assert!(prices.price_of("some-other-model").is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices {
    models: HashMap<String, Price>,
    otherwise: Option<Price>,
}

impl Prices {
    /// No prices.
    pub fn new() -> Self {
        Prices::default()
    }

    /// `model`'s price.
    pub fn model(mut self, model: impl Into<String>, price: Price) -> Self {
        self.models.insert(model.into(), price);
        self
    }

    /// The price of every model not named (e.g. a local model at zero).
    pub fn otherwise(mut self, price: Price) -> Self {
        self.otherwise = Some(price);
        self
    }

    /// `model`'s price: its own, else the fallback.
    pub fn price_of(&self, model: &str) -> Option<Price> {
        self.models.get(model).copied().or(self.otherwise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_per_million_is_millionths_per_token() {
        let price = Price::per_million_tokens(2.5, 10.0);
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
        };
        // 2.50 + 1.00 = 3.50 of the currency.
        assert_eq!(price.of(usage), 3_500_000);
        let one = Usage {
            input_tokens: 1,
            output_tokens: 0,
        };
        assert_eq!(
            Price::per_million_tokens(0.15, 0.6).of(one),
            1,
            "rounded up"
        );
        assert_eq!(Price::per_million_tokens(-1.0, f64::NAN).of(usage), 0);
    }

    #[test]
    fn the_fallback_prices_unnamed_models() {
        let prices = Prices::new()
            .model("a", Price::per_million_tokens(1.0, 1.0))
            .otherwise(Price::per_million_tokens(0.0, 0.0));
        assert_eq!(
            prices.price_of("a"),
            Some(Price::per_million_tokens(1.0, 1.0))
        );
        assert_eq!(
            prices.price_of("b"),
            Some(Price::per_million_tokens(0.0, 0.0))
        );
    }
}
