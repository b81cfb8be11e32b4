//! One decision: the caller, the tool and the context as Cedar entities and values, the
//! rules evaluated by Cedar's authorizer, the answer read with the rules that decided.
//!
//! - `forbid` beats `permit`; nothing permitted is refused.
//! - A permit carrying `@approval("why")` among the deciding rules asks a person first.
//! - A refusal says the deciding forbid's `@reason("why")`, or that no rule permits.
//! - A rule that fails to evaluate refuses the call (nothing decided is not a permit).

use std::collections::HashMap;

use cedar_policy::{Context, Decision, Entity, Response, RestrictedExpression};
use serde_json::Value;

use super::compiled::{Compiled, uid};
use super::deciders::{Decider, Said};
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

    /// The time as the context holds it; `now` only when a rule reads it (no rule can tell
    /// it is left out, and its `datetime` is parsed anew whenever it is given).
    fn context(&self, with_now: bool) -> Vec<(String, RestrictedExpression)> {
        let mut pairs = vec![
            ("hour".to_owned(), RestrictedExpression::new_long(self.hour)),
            (
                "minute".to_owned(),
                RestrictedExpression::new_long(self.minute),
            ),
            (
                "weekday".to_owned(),
                RestrictedExpression::new_long(self.weekday),
            ),
        ];
        if with_now {
            pairs.push(("now".to_owned(), datetime(&self.now)));
        }
        pairs
    }
}

/// `now` as a Cedar `datetime`, made once a second on each thread: Cedar parses the
/// extension's name whenever one is made.
fn datetime(now: &str) -> RestrictedExpression {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, RestrictedExpression)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((said, value)) if said == now => value.clone(),
        _ => {
            let value = RestrictedExpression::new_datetime(now);
            *last = Some((now.to_owned(), value.clone()));
            value
        }
    })
}

/// Where a call came from, for `context.front` and `context.run_id`.
pub(crate) struct Origin<'a> {
    pub(crate) front: &'a str,
    pub(crate) run_id: Option<&'a str>,
}

impl Compiled {
    /// Whether `caller` may see `tool`.
    pub(crate) fn may_see(&self, caller: &Caller, tool: &str, offset: i32) -> bool {
        let Some(facts) = self.tools.get(tool) else {
            return false;
        };
        if let Some(settled) = &facts.see.settled {
            return matches!(settled, Verdict::Permit { .. });
        }
        let Ok(context) = Context::from_pairs(Clock::now(offset).context(facts.see.reads_now))
        else {
            return false;
        };
        let answer = facts.see.decide(self.caller_entity(caller), context);
        matches!(verdict(&facts.see, answer), Some(Verdict::Permit { .. }))
    }

    /// The verdict on `caller` calling `tool` with (checked) `arguments`.
    pub(crate) fn call(
        &self,
        caller: &Caller,
        tool: &str,
        arguments: &Value,
        origin: &Origin<'_>,
        offset: i32,
    ) -> Verdict {
        let Some(facts) = self.tools.get(tool) else {
            return not_compiled(tool);
        };
        if let Some(settled) = &facts.call.settled {
            return settled.clone();
        }
        let Some(typed) = facts.arguments.value(arguments) else {
            return untyped(tool);
        };
        let mut pairs = Clock::now(offset).context(facts.call.reads_now);
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
        let answer = facts.call.decide(self.caller_entity(caller), context);
        verdict(&facts.call, answer).unwrap_or_else(|| failed(tool))
    }

    /// The verdict on `approver` deciding `requester`'s waiting call of `tool`.
    pub(crate) fn approve(
        &self,
        approver: &Caller,
        requester: &Caller,
        tool: &str,
        arguments: &Value,
        offset: i32,
    ) -> Verdict {
        let Some(facts) = self.tools.get(tool) else {
            return not_compiled(tool);
        };
        if let Some(settled) = &facts.approve.settled {
            return settled.clone();
        }
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
        let mut pairs = Clock::now(offset).context(facts.approve.reads_now);
        pairs.push(("arguments".to_owned(), typed));
        pairs.push(("requester".to_owned(), who));
        let Ok(context) = Context::from_pairs(pairs) else {
            return untyped(tool);
        };
        let answer = facts.approve.decide(self.caller_entity(approver), context);
        verdict(&facts.approve, answer).unwrap_or_else(|| failed(tool))
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
        let below = &self.roles[..rank.map_or(0, |rank| rank + 1)];
        let parents = below.iter().map(|role| uid("Role", role)).collect();
        Entity::new(uid("Caller", caller.id()), attributes, parents)
            .unwrap_or_else(|_| Entity::with_uid(uid("Caller", caller.id())))
    }
}

/// The answer read: `None` when a rule could not be evaluated.
fn verdict(decider: &Decider, answer: Option<Response>) -> Option<Verdict> {
    let answer = answer?;
    let diagnostics = answer.diagnostics();
    if diagnostics.errors().next().is_some() {
        return None;
    }
    let rules: Vec<String> = diagnostics.reason().map(ToString::to_string).collect();
    let annotation = |pick: fn(&Said) -> Option<&String>| {
        diagnostics.reason().find_map(|id| {
            let text = pick(decider.said(id)?)?;
            Some(format!("{text} (rule `{id}`)"))
        })
    };
    Some(match answer.decision() {
        Decision::Allow => Verdict::Permit {
            approval: annotation(|said| said.approval.as_ref()),
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
            let reason = annotation(|said| said.reason.as_ref())
                .unwrap_or_else(|| format!("a rule forbids it ({named})"));
            Verdict::Forbid { reason, rules }
        }
    })
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
