//! One decision: the caller, the tool and the context as Cedar entities and values, the
//! rules evaluated by Cedar's authorizer, the answer read with the rules that decided.
//!
//! - `forbid` beats `permit`; nothing permitted is refused.
//! - A permit carrying `@approval("why")` among the deciding rules asks a person first.
//! - A refusal says the deciding forbid's `@reason("why")`, or that no rule permits.
//! - A rule that fails to evaluate refuses the call (nothing decided is not a permit).

use std::collections::HashMap;

use cedar_policy::{
    Authorizer, Context, Decision, Entities, Entity, EntityUid, Request, Response,
    RestrictedExpression,
};
use serde_json::Value;

use super::compiled::{Compiled, uid};
use crate::caller::Caller;

/// What the rules decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Permit {
        rules: Vec<String>,
        approval: Option<String>,
    },
    Forbid {
        rules: Vec<String>,
        reason: String,
    },
}

/// The time of a decision, as the rules read it.
pub(crate) struct Clock {
    pub(crate) now: String,
    pub(crate) hour: i64,
    pub(crate) minute: i64,
    pub(crate) weekday: i64,
}

impl Clock {
    /// Now, with `offset_minutes` from UTC for the hour, minute and weekday.
    pub(crate) fn now(offset_minutes: i32) -> Clock {
        let system = std::time::SystemTime::now();
        let seconds = system
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs() as i64);
        let local = seconds + i64::from(offset_minutes) * 60;
        let days = local.div_euclid(86_400);
        let of_day = local.rem_euclid(86_400);
        Clock {
            now: humantime::format_rfc3339_seconds(system).to_string(),
            hour: of_day / 3600,
            minute: of_day % 3600 / 60,
            // 1970-01-01 was a Thursday; Monday is 1.
            weekday: (days + 3).rem_euclid(7) + 1,
        }
    }

    fn context(&self) -> Vec<(String, RestrictedExpression)> {
        vec![
            (
                "now".to_owned(),
                RestrictedExpression::new_datetime(&self.now),
            ),
            ("hour".to_owned(), RestrictedExpression::new_long(self.hour)),
            (
                "minute".to_owned(),
                RestrictedExpression::new_long(self.minute),
            ),
            (
                "weekday".to_owned(),
                RestrictedExpression::new_long(self.weekday),
            ),
        ]
    }
}

/// Where a call came from, for `context.front` and `context.run_id`.
pub(crate) struct Origin<'a> {
    pub(crate) front: &'a str,
    pub(crate) run_id: Option<&'a str>,
}

impl Compiled {
    /// Whether `caller` may see `tool`.
    pub(crate) fn may_see(&self, caller: &Caller, tool: &str, clock: &Clock) -> bool {
        let Some(facts) = self.tools.get(tool) else {
            return false;
        };
        let Ok(context) = Context::from_pairs(clock.context()) else {
            return false;
        };
        let entities = [
            self.caller_entity(caller),
            facts.entity.clone(),
            self.see.1.clone(),
        ];
        let answer = self.evaluate(caller, &self.see.0, tool, context, entities);
        matches!(self.verdict(answer), Some(Verdict::Permit { .. }))
    }

    /// The verdict on `caller` calling `tool` with (checked) `arguments`.
    pub(crate) fn call(
        &self,
        caller: &Caller,
        tool: &str,
        arguments: &Value,
        origin: &Origin<'_>,
        clock: &Clock,
    ) -> Verdict {
        let Some(facts) = self.tools.get(tool) else {
            return not_compiled(tool);
        };
        let Some(typed) = facts.arguments.value(arguments) else {
            return untyped(tool);
        };
        let mut pairs = clock.context();
        pairs.push(("arguments".to_owned(), typed));
        pairs.push((
            "front".to_owned(),
            RestrictedExpression::new_string(origin.front.to_owned()),
        ));
        if let Some(run) = origin.run_id {
            pairs.push((
                "run_id".to_owned(),
                RestrictedExpression::new_string(run.to_owned()),
            ));
        }
        let Ok(context) = Context::from_pairs(pairs) else {
            return untyped(tool);
        };
        let entities = [
            self.caller_entity(caller),
            facts.entity.clone(),
            facts.call.1.clone(),
            self.call_group.clone(),
        ];
        let answer = self.evaluate(caller, &facts.call.0, tool, context, entities);
        self.verdict(answer).unwrap_or_else(|| failed(tool))
    }

    /// The verdict on `approver` deciding `requester`'s waiting call of `tool`.
    pub(crate) fn approve(
        &self,
        approver: &Caller,
        requester: &Caller,
        tool: &str,
        arguments: &Value,
        clock: &Clock,
    ) -> Verdict {
        let Some(facts) = self.tools.get(tool) else {
            return not_compiled(tool);
        };
        let Some(typed) = facts.arguments.value(arguments) else {
            return untyped(tool);
        };
        let string = |text: &str| RestrictedExpression::new_string(text.to_owned());
        let who = [
            ("id".to_owned(), string(requester.id())),
            ("role".to_owned(), string(requester.role())),
        ];
        let Ok(who) = RestrictedExpression::new_record(who) else {
            return untyped(tool);
        };
        let mut pairs = clock.context();
        pairs.push(("arguments".to_owned(), typed));
        pairs.push(("requester".to_owned(), who));
        let Ok(context) = Context::from_pairs(pairs) else {
            return untyped(tool);
        };
        let entities = [
            self.caller_entity(approver),
            facts.entity.clone(),
            facts.approve.1.clone(),
            self.approve_group.clone(),
        ];
        let answer = self.evaluate(approver, &facts.approve.0, tool, context, entities);
        self.verdict(answer).unwrap_or_else(|| failed(tool))
    }

    fn evaluate<const N: usize>(
        &self,
        caller: &Caller,
        action: &EntityUid,
        tool: &str,
        context: Context,
        entities: [Entity; N],
    ) -> Option<Response> {
        let principal = uid("Caller", caller.id());
        let request =
            Request::new(principal, action.clone(), uid("Tool", tool), context, None).ok()?;
        let entities = Entities::from_entities(entities, None).ok()?;
        Some(Authorizer::new().is_authorized(&request, &self.policies, &entities))
    }

    /// The answer read: `None` when a rule could not be evaluated.
    fn verdict(&self, answer: Option<Response>) -> Option<Verdict> {
        let answer = answer?;
        let diagnostics = answer.diagnostics();
        if diagnostics.errors().next().is_some() {
            return None;
        }
        let rules: Vec<String> = diagnostics.reason().map(ToString::to_string).collect();
        let annotation = |key: &str| {
            diagnostics.reason().find_map(|id| {
                self.policies
                    .annotation(id, key)
                    .map(|text| format!("{text} (rule `{id}`)"))
            })
        };
        Some(match answer.decision() {
            Decision::Allow => Verdict::Permit {
                approval: annotation("approval"),
                rules,
            },
            Decision::Deny if rules.is_empty() => Verdict::Forbid {
                reason: "no rule permits it".to_owned(),
                rules,
            },
            Decision::Deny => {
                let named = rules
                    .iter()
                    .map(|rule| format!("`{rule}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let reason =
                    annotation("reason").unwrap_or_else(|| format!("a rule forbids it ({named})"));
                Verdict::Forbid { reason, rules }
            }
        })
    }

    /// The caller as the rules see it: its id, role, issuer and declared claims, a member
    /// of its role and every role below.
    fn caller_entity(&self, caller: &Caller) -> Entity {
        let string = |text: &str| RestrictedExpression::new_string(text.to_owned());
        let claims = self.claims.iter().filter_map(|(name, ty)| {
            let value = caller.claim(name)?;
            Some((name.clone(), ty.value(value)?))
        });
        let claims = RestrictedExpression::new_record(claims)
            .unwrap_or_else(|_| RestrictedExpression::new_record([]).expect("an empty record"));
        let mut attributes = HashMap::from([
            ("id".to_owned(), string(caller.id())),
            ("role".to_owned(), string(caller.role())),
            ("claims".to_owned(), claims),
        ]);
        if let Some(issuer) = caller.issuer() {
            attributes.insert("issuer".to_owned(), string(issuer));
        }
        let rank = self.roles.iter().position(|role| role == caller.role());
        let parents = self.roles[..rank.map_or(0, |rank| rank + 1)]
            .iter()
            .map(|role| uid("Role", role))
            .collect();
        Entity::new(uid("Caller", caller.id()), attributes, parents)
            .unwrap_or_else(|_| Entity::with_uid(uid("Caller", caller.id())))
    }
}

fn not_compiled(tool: &str) -> Verdict {
    Verdict::Forbid {
        rules: Vec::new(),
        reason: format!("the rules have not been checked against the tool `{tool}` yet"),
    }
}

fn untyped(tool: &str) -> Verdict {
    Verdict::Forbid {
        rules: Vec::new(),
        reason: format!("the arguments of `{tool}` could not be given to the rules"),
    }
}

fn failed(tool: &str) -> Verdict {
    Verdict::Forbid {
        rules: Vec::new(),
        reason: format!(
            "a rule about `{tool}` could not be evaluated, so nothing permits the call"
        ),
    }
}
