//! `[budgets]` and the model's `price`: the registry's budgets, each mistake named at its
//! line.

use toml::Spanned;
use toolgate::RegistryBuilder;
use toolgate::budget::{Budget, Price, Prices};
use toolgate_tools::Problem;

use super::Config;
use super::keys::BudgetKey;

impl Config {
    /// The budgets of `[budgets]`, and the model's price where a cost budget needs it.
    pub(super) fn budgets(&self, mut builder: RegistryBuilder) -> Result<RegistryBuilder, Problem> {
        let budgets = &self.file.budgets;
        let tables = [
            ("per_run", &budgets.per_run),
            ("per_caller", &budgets.per_caller),
        ];
        let mut costs = None;
        for (name, table) in tables {
            let Some(table) = table else { continue };
            for budget in self.budgets_of(name, table)? {
                if budget.measure() == toolgate::budget::Measure::Cost {
                    costs = Some(table.span());
                }
                builder = builder.budget(budget);
            }
        }
        let model = self.file.model.as_ref();
        match (model.and_then(|model| model.price.map(|price| (model, price))), costs) {
            (Some((model, price)), _) => {
                let price = Price::per_million_tokens(price.input, price.output);
                Ok(builder.prices(Prices::new().model(model.name.clone(), price)))
            }
            (None, Some(span)) => Err(self.problem_at(
                span,
                "a `cost` budget needs what the model's tokens cost: add `price = {input = 0.15, output = 0.60}` (per million tokens) under `[model]`",
            )),
            (None, None) => Ok(builder),
        }
    }

    /// The ceilings written in `[budgets.<name>]`.
    fn budgets_of(&self, name: &str, table: &Spanned<BudgetKey>) -> Result<Vec<Budget>, Problem> {
        let key = table.get_ref();
        let at = |message: String| self.problem_at(table.span(), message);
        let scope = match (name, key.every) {
            ("per_run", None) => None,
            ("per_run", Some(_)) => {
                return Err(at("`[budgets.per_run]` counts each run: `every` belongs in `[budgets.per_caller]`".into()));
            }
            (_, Some(every)) => Some(every),
            (_, None) => {
                return Err(at("`[budgets.per_caller]` needs the period it counts over: add e.g. `every = \"1day\"`".into()));
            }
        };
        if let Some(cost) = key.cost.filter(|cost| !cost.is_finite() || *cost < 0.0) {
            return Err(at(format!(
                "`cost = {cost}` is no amount of money; write a positive number, e.g. `cost = 5.0`"
            )));
        }
        let written = [
            key.tokens.map(Budget::tokens),
            key.input_tokens.map(Budget::input_tokens),
            key.output_tokens.map(Budget::output_tokens),
            key.cost.map(Budget::cost),
            key.tool_calls.map(Budget::tool_calls),
        ];
        let budgets: Vec<Budget> = written
            .into_iter()
            .flatten()
            .map(|budget| match scope {
                Some(period) => budget.per_caller(period),
                None => budget,
            })
            .collect();
        if budgets.is_empty() {
            return Err(at(format!(
                "`[budgets.{name}]` sets no ceiling: add `tokens`, `input_tokens`, `output_tokens`, `cost` or `tool_calls`"
            )));
        }
        Ok(budgets)
    }
}
