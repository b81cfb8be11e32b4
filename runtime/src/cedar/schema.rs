//! The Cedar schema of a registry, generated from its roles, the claims the application
//! declares, and its tools: what rules are checked against at build, so a rule naming an
//! argument a tool does not have, or comparing it with the wrong type, is a build problem.
//!
//! ```text
//! entity Role enum [roles...];
//! entity Caller in [Role] { id: String, role: String, issuer?: String, claims: { <declared>? } };
//! entity Tool { name, group?, permission: Role, risk, read_only, destructive, idempotent,
//!               open_world, tags: Set<String>, source };
//! action "see"                         appliesTo { Caller, Tool, context: { now, hour, minute, weekday } };
//! action "call";   action "call:<tool>"    in "call"    { ..., context: { arguments: <typed>, front, run_id?, ... } };
//! action "approve"; action "approve:<tool>" in "approve" { ..., context: { arguments, requester: { id, role }, ... } };
//! ```

use serde_json::{Map, Value, json};

use super::typing::{CedarType, LeftOut, arguments_type};
use crate::definition::ToolDefinition;

/// One tool as the schema and the rules see it.
pub(crate) struct ToolTyping {
    pub(crate) name: String,
    pub(crate) arguments: CedarType,
    pub(crate) left_out: Vec<LeftOut>,
}

impl ToolTyping {
    pub(crate) fn of(tool: &ToolDefinition) -> ToolTyping {
        let (arguments, left_out) = arguments_type(&tool.input_schema);
        ToolTyping {
            name: tool.name.clone(),
            arguments,
            left_out,
        }
    }
}

/// A claim's type as the application declares it: `String`, `Long`, `Bool`, or a `Set<>`
/// of one of them.
pub(crate) fn claim_type(declared: &str) -> Option<CedarType> {
    let declared = declared.trim();
    if let Some(inner) = declared
        .strip_prefix("Set<")
        .and_then(|rest| rest.strip_suffix('>'))
    {
        return claim_type(inner)
            .filter(|inner| !matches!(inner, CedarType::Set(_)))
            .map(|inner| CedarType::Set(Box::new(inner)));
    }
    match declared {
        "String" => Some(CedarType::String),
        "Long" => Some(CedarType::Long),
        "Bool" | "Boolean" => Some(CedarType::Bool),
        _ => None,
    }
}

/// The schema, as Cedar's JSON schema format writes it.
pub(crate) fn schema(
    roles: &[String],
    claims: &[(String, CedarType)],
    tools: &[ToolTyping],
) -> Value {
    let claims: Map<String, Value> = claims
        .iter()
        .map(|(name, ty)| {
            let mut ty = ty.schema();
            ty["required"] = json!(false);
            (name.clone(), ty)
        })
        .collect();
    let entity_types = json!({
        "Role": {"enum": roles},
        "Caller": {"memberOfTypes": ["Role"], "shape": {"type": "Record", "attributes": {
            "id": {"type": "String"},
            "role": {"type": "String"},
            "issuer": {"type": "String", "required": false},
            "claims": {"type": "Record", "attributes": claims},
        }}},
        "Tool": {"shape": {"type": "Record", "attributes": {
            "name": {"type": "String"},
            "group": {"type": "String", "required": false},
            "permission": {"type": "Entity", "name": "Role"},
            "risk": {"type": "String"},
            "read_only": {"type": "Boolean"},
            "destructive": {"type": "Boolean"},
            "idempotent": {"type": "Boolean"},
            "open_world": {"type": "Boolean"},
            "tags": {"type": "Set", "element": {"type": "String"}},
            "source": {"type": "String"},
        }}},
    });
    let mut actions = Map::new();
    actions.insert("see".into(), applies_to(time_context()));
    actions.insert("call".into(), json!({}));
    actions.insert("approve".into(), json!({}));
    for tool in tools {
        let mut call = time_context();
        call.insert("arguments".into(), tool.arguments.schema());
        call.insert("front".into(), json!({"type": "String"}));
        call.insert(
            "run_id".into(),
            json!({"type": "String", "required": false}),
        );
        let mut approve = time_context();
        approve.insert("arguments".into(), tool.arguments.schema());
        let requester = json!({"id": {"type": "String"}, "role": {"type": "String"}});
        approve.insert(
            "requester".into(),
            json!({"type": "Record", "attributes": requester}),
        );
        actions.insert(call_action(&tool.name), member_of("call", applies_to(call)));
        actions.insert(
            approve_action(&tool.name),
            member_of("approve", applies_to(approve)),
        );
    }
    json!({"": {"entityTypes": entity_types, "actions": actions}})
}

/// The action of calling `tool`.
pub(crate) fn call_action(tool: &str) -> String {
    format!("call:{tool}")
}

/// The action of deciding a waiting call of `tool`.
pub(crate) fn approve_action(tool: &str) -> String {
    format!("approve:{tool}")
}

/// What every action's context holds: the time, in UTC and as the application's clock
/// reads it.
fn time_context() -> Map<String, Value> {
    let long = json!({"type": "Long"});
    let mut context = Map::new();
    context.insert(
        "now".into(),
        json!({"type": "Extension", "name": "datetime"}),
    );
    context.insert("hour".into(), long.clone());
    context.insert("minute".into(), long.clone());
    context.insert("weekday".into(), long);
    context
}

fn applies_to(context: Map<String, Value>) -> Value {
    json!({"appliesTo": {
        "principalTypes": ["Caller"],
        "resourceTypes": ["Tool"],
        "context": {"type": "Record", "attributes": context},
    }})
}

fn member_of(group: &str, mut action: Value) -> Value {
    action["memberOf"] = json!([{"id": group}]);
    action
}

#[cfg(test)]
mod tests {
    use super::{CedarType, claim_type};

    #[test]
    fn claims_are_declared_with_cedars_own_type_names() {
        assert_eq!(claim_type("String"), Some(CedarType::String));
        assert_eq!(
            claim_type(" Set<String> "),
            Some(CedarType::Set(Box::new(CedarType::String)))
        );
        assert_eq!(claim_type("Bool"), Some(CedarType::Bool));
        assert_eq!(claim_type("Set<Set<Long>>"), None);
        assert_eq!(claim_type("Decimal"), None);
    }
}
