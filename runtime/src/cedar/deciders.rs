//! What one action of one tool is decided with, made once when the rules are compiled: the
//! entities besides the caller (the tool, the action and its group) and the rules whose
//! scope can match it. Cedar would skip the other rules by their scope too, but only after
//! evaluating it for every call; slicing them away here is why a registry with a thousand
//! rules about other tools pays almost nothing for them.

use std::collections::HashMap;

use super::compiled::ROLE_RULE;
use super::decide::Verdict;

use cedar_policy::{
    ActionConstraint, Authorizer, Context, Entities, Entity, EntityUid, Policy, PolicyId,
    PolicySet, Request, ResourceConstraint, Response,
};

/// The rules and entities of one action of one tool.
pub(crate) struct Decider {
    action: EntityUid,
    resource: EntityUid,
    entities: Entities,
    policies: PolicySet,
    /// Each rule's `@approval` and `@reason`, read once (Cedar parses the key on every
    /// lookup).
    said: HashMap<PolicyId, Said>,
    /// Whether a rule reads `context.now` (a `datetime`, which Cedar parses anew for every
    /// request that carries it).
    pub(crate) reads_now: bool,
    /// The verdict when it is known without asking Cedar: no rule at all (nothing is
    /// permitted), or only the roles' own rule (within the registry's role check, which
    /// comes first, it always permits).
    pub(crate) settled: Option<Verdict>,
}

/// What a rule's annotations say to people.
#[derive(Default)]
pub(crate) struct Said {
    pub(crate) approval: Option<String>,
    pub(crate) reason: Option<String>,
}

impl Decider {
    /// The decider of `action` (with its `group`, if any) on the tool `resource`.
    pub(crate) fn new(
        all: &PolicySet,
        (action, group): (&Entity, Option<&Entity>),
        resource: &Entity,
    ) -> Decider {
        let (action_uid, resource_uid) = (action.uid(), resource.uid());
        let group_uid = group.map(Entity::uid);
        let mut policies = PolicySet::new();
        let mut said = HashMap::new();
        let mut reads_now = false;
        for policy in all.policies() {
            if in_scope(policy, &action_uid, group_uid.as_ref(), &resource_uid) {
                reads_now |= policy
                    .to_json()
                    .is_ok_and(|json| reads_context(&json, "now"));
                let _ = policies.add(policy.clone());
                let annotation = |key| policy.annotation(key).map(str::to_owned);
                let (approval, reason) = (annotation("approval"), annotation("reason"));
                said.insert(policy.id().clone(), Said { approval, reason });
            }
        }
        let entities = [Some(action.clone()), group.cloned(), Some(resource.clone())];
        let entities = Entities::from_entities(entities.into_iter().flatten(), None)
            .unwrap_or_else(|_| Entities::empty());
        let settled = match policies
            .policies()
            .map(|policy| policy.id().to_string())
            .collect::<Vec<_>>()
            .as_slice()
        {
            [] => Some(Verdict::Forbid {
                rules: Vec::new(),
                reason: "no rule permits it".to_owned(),
            }),
            [only] if only == ROLE_RULE => Some(Verdict::Permit {
                rules: vec![ROLE_RULE.to_owned()],
                approval: None,
            }),
            _ => None,
        };
        Decider {
            action: action_uid,
            resource: resource_uid,
            entities,
            policies,
            said,
            reads_now,
            settled,
        }
    }

    /// What rule `id` says to people.
    pub(crate) fn said(&self, id: &PolicyId) -> Option<&Said> {
        self.said.get(id)
    }

    /// Cedar's answer for `caller` in `context`; `None` if the request cannot be made.
    pub(crate) fn decide(&self, caller: Entity, context: Context) -> Option<Response> {
        let principal = caller.uid();
        let request = Request::new(
            principal,
            self.action.clone(),
            self.resource.clone(),
            context,
            None,
        )
        .ok()?;
        let entities = self.entities.clone().add_entities([caller], None).ok()?;
        Some(Authorizer::new().is_authorized(&request, &self.policies, &entities))
    }
}

/// Whether a rule's JSON form reads `context.<attribute>` (or tests it with `has`).
fn reads_context(json: &serde_json::Value, attribute: &str) -> bool {
    use serde_json::Value;
    match json {
        Value::Object(object) => {
            let reads = [".", "has"].iter().any(|op| {
                object.get(*op).is_some_and(|access| {
                    access["left"] == serde_json::json!({"Var": "context"})
                        && access["attr"] == attribute
                })
            });
            reads || object.values().any(|inner| reads_context(inner, attribute))
        }
        Value::Array(items) => items.iter().any(|inner| reads_context(inner, attribute)),
        _ => false,
    }
}

/// Whether `policy`'s action and resource scope can match `action` (in `group`) on the
/// tool `resource`. Tools belong to no entity, so `resource in` a tool is `resource ==` it.
fn in_scope(
    policy: &Policy,
    action: &EntityUid,
    group: Option<&EntityUid>,
    resource: &EntityUid,
) -> bool {
    let action_fits = match policy.action_constraint() {
        ActionConstraint::Any => true,
        ActionConstraint::Eq(named) => named == *action,
        ActionConstraint::In(named) => named
            .iter()
            .any(|named| named == action || Some(named) == group),
    };
    let resource_fits = match policy.resource_constraint() {
        ResourceConstraint::Eq(named) | ResourceConstraint::In(named) => named == *resource,
        ResourceConstraint::IsIn(_, named) => named == *resource,
        ResourceConstraint::Any | ResourceConstraint::Is(_) => true,
    };
    action_fits && resource_fits
}
