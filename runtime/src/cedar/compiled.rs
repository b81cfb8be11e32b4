//! Rules made ready for a registry's tools: the generated schema, the rules checked against
//! it (Cedar's validator, strict), and the entities every decision needs, built once.

use std::collections::HashMap;
use std::str::FromStr;

use cedar_policy::{
    Entity, EntityId, EntityTypeName, EntityUid, PolicyId, PolicySet, RestrictedExpression, Schema,
    ValidationMode, ValidationWarning, Validator,
};
use serde_json::Value;

use super::deciders::Decider;
use super::problem::CedarProblem;
use super::schema::{ToolTyping, approve_action, call_action, schema};
use super::sources::Parsed;
use super::typing::CedarType;
use crate::definition::ToolDefinition;

/// The rules that express the roles: within a caller's role, everything is permitted (the
/// registry's own role check, and its approver role, stay the floor whatever the rules say).
/// The id of the roles' own rule.
pub(crate) const ROLE_RULE: &str = "toolgate.roles";

const ROLE_RULES: &str = r#"
@id("toolgate.roles")
permit (principal, action in [Action::"see", Action::"call", Action::"approve"], resource)
when { principal in resource.permission };
"#;

/// Rules ready to decide.
pub(crate) struct Compiled {
    pub(crate) tools: HashMap<String, ToolFacts>,
    /// The role names, lowest first.
    pub(crate) roles: Vec<String>,
    pub(crate) claims: Vec<(String, CedarType)>,
}

impl Compiled {
    /// Rules that decide nothing yet: every call and listing they see is refused.
    pub(crate) fn refusing(settings: &Settings<'_>) -> Compiled {
        Compiled {
            tools: HashMap::new(),
            roles: settings.roles.to_vec(),
            claims: settings.claims.to_vec(),
        }
    }
}

/// What the decisions about one tool need.
pub(crate) struct ToolFacts {
    pub(crate) arguments: CedarType,
    pub(crate) see: Decider,
    pub(crate) call: Decider,
    pub(crate) approve: Decider,
}

/// What a set of rules is compiled with.
pub(crate) struct Settings<'a> {
    pub(crate) roles: &'a [String],
    pub(crate) claims: &'a [(String, CedarType)],
    pub(crate) role_rules: bool,
}

/// Compiles `parsed` for `tools`; every problem, with its file and line.
pub(crate) fn compile(
    parsed: &Parsed,
    tools: &[&ToolDefinition],
    settings: &Settings<'_>,
) -> Result<Compiled, Vec<CedarProblem>> {
    let typings: Vec<ToolTyping> = tools.iter().map(|tool| ToolTyping::of(tool)).collect();
    let generated = schema(settings.roles, settings.claims, &typings);
    let schema = Schema::from_json_value(generated).map_err(|error| {
        vec![CedarProblem::of(
            "toolgate",
            format!("the generated Cedar schema is refused: {error}"),
        )]
    })?;
    let mut policies = parsed.policies.clone();
    if settings.role_rules {
        let roles = PolicySet::from_str(ROLE_RULES).expect("toolgate's role rules parse");
        for policy in roles.policies() {
            let id = policy.annotation("id").unwrap_or(ROLE_RULE);
            let _ = policies.add(policy.new_id(cedar_policy::PolicyId::new(id)));
        }
    }
    let mut problems = validate(&schema, &policies, parsed, &typings);
    problems.extend(unknown_tools(&policies, parsed, tools));
    if !problems.is_empty() {
        return Err(problems);
    }
    let actions = schema
        .action_entities()
        .map_err(|error| vec![CedarProblem::of("toolgate", error.to_string())])?;
    let action = |id: &str| -> Entity {
        let uid = uid("Action", id);
        actions
            .get(&uid)
            .cloned()
            .unwrap_or_else(|| Entity::with_uid(uid))
    };
    let (see, call_group, approve_group) = (action("see"), action("call"), action("approve"));
    let facts = tools
        .iter()
        .zip(typings)
        .map(|(tool, typing)| {
            let entity = tool_entity(tool);
            let decider =
                |action: &Entity, group| Decider::new(&policies, (action, group), &entity);
            let facts = ToolFacts {
                arguments: typing.arguments,
                see: decider(&see, None),
                call: decider(&action(&call_action(&tool.name)), Some(&call_group)),
                approve: decider(&action(&approve_action(&tool.name)), Some(&approve_group)),
            };
            (tool.name.clone(), facts)
        })
        .collect();
    Ok(Compiled {
        tools: facts,
        roles: settings.roles.to_vec(),
        claims: settings.claims.to_vec(),
    })
}

/// Cedar's validator, strict: an unknown argument, role or claim, a wrong type, an
/// unknown action. An argument left out of the typed context says why.
fn validate(
    schema: &Schema,
    policies: &PolicySet,
    parsed: &Parsed,
    typings: &[ToolTyping],
) -> Vec<CedarProblem> {
    let result = Validator::new(schema.clone()).validate(policies, ValidationMode::Strict);
    let mut problems: Vec<CedarProblem> = result
        .validation_errors()
        .map(|error| {
            let mut message = error.to_string();
            if let Some(why) = left_out_named(&message, typings) {
                message.push_str(&format!(": {why}"));
            }
            located(parsed, error.policy_id(), error, message)
        })
        .collect();
    let failed: Vec<&PolicyId> = result
        .validation_errors()
        .map(|error| error.policy_id())
        .collect();
    // A rule with errors has said what is wrong with it; its warnings would only repeat it.
    let warnings = result
        .validation_warnings()
        .filter(|w| !failed.contains(&w.policy_id()));
    for warning in warnings {
        let message = warning.to_string();
        match warning {
            // A rule that can never apply is a mistake (a `has` of a claim not declared, an
            // action that applies to nothing); text that reads otherwise than it runs, worse.
            ValidationWarning::ImpossiblePolicy(_) => {
                let hint = " (a `has` test of a claim that is not declared, or of an attribute \
                            the tool never has, can never hold)";
                let message = format!("{message}{hint}");
                problems.push(located(parsed, warning.policy_id(), warning, message));
            }
            ValidationWarning::InvalidActionApplication(_)
            | ValidationWarning::BidiCharsInString(_)
            | ValidationWarning::BidiCharsInIdentifier(_) => {
                problems.push(located(parsed, warning.policy_id(), warning, message));
            }
            _ => tracing::warn!(rule = %warning.policy_id(), "{message}"),
        }
    }
    problems
}

/// A problem Cedar found in rule `id`, at its place in its file.
fn located(
    parsed: &Parsed,
    id: &PolicyId,
    diagnostic: &dyn miette::Diagnostic,
    message: String,
) -> CedarProblem {
    match parsed.origins.get(id).map(|index| &parsed.files[*index]) {
        Some(file) => CedarProblem::reported(&file.name, &file.text, diagnostic, message),
        None => CedarProblem::of("toolgate", message),
    }
}

/// Why an argument a message names (`attribute `arguments.price` ... for Action::"call:t"`)
/// was left out of its tool's typed context, if it was.
fn left_out_named(message: &str, typings: &[ToolTyping]) -> Option<String> {
    let named = message
        .split('`')
        .find_map(|quoted| quoted.strip_prefix("arguments."))?;
    typings.iter().find_map(|typing| {
        let mentioned = message.contains(&format!("\"{}\"", call_action(&typing.name)))
            || message.contains(&format!("\"{}\"", approve_action(&typing.name)));
        let left = typing.left_out.iter().find(|left| left.path == named)?;
        mentioned.then(|| {
            format!(
                "`{named}` of `{}` is not in the typed arguments: {}",
                typing.name, left.why
            )
        })
    })
}

/// Rules naming a tool (`Tool::"name"`) that is not registered.
fn unknown_tools(
    policies: &PolicySet,
    parsed: &Parsed,
    tools: &[&ToolDefinition],
) -> Vec<CedarProblem> {
    let mut problems = Vec::new();
    for policy in policies.policies() {
        let Ok(json) = policy.to_json() else { continue };
        let mut named = Vec::new();
        tools_named(&json, &mut named);
        for name in named {
            if tools.iter().any(|tool| tool.name == name) {
                continue;
            }
            let nearest = tools
                .iter()
                .map(|tool| (strsim::levenshtein(&tool.name, &name), &tool.name))
                .min()
                .filter(|(distance, _)| *distance <= 3)
                .map(|(_, tool)| format!(" (did you mean `{tool}`?)"))
                .unwrap_or_default();
            let message = format!(
                "rule `{}` names the tool `{name}`, which is not registered{nearest}",
                policy.id()
            );
            let file = parsed
                .origins
                .get(policy.id())
                .map(|index| &parsed.files[*index]);
            problems.push(match file {
                Some(file) => CedarProblem {
                    file: file.name.clone(),
                    line: file
                        .text
                        .find(&format!("Tool::\"{name}\""))
                        .map(|at| super::problem::line_at(&file.text, at)),
                    message,
                },
                None => CedarProblem::of("toolgate", message),
            });
        }
    }
    problems
}

/// The ids of `Tool` entities a rule's JSON form names.
fn tools_named(value: &Value, named: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if object.get("type").and_then(Value::as_str) == Some("Tool")
                && let Some(id) = object.get("id").and_then(Value::as_str)
            {
                named.push(id.to_owned());
            }
            object.values().for_each(|inner| tools_named(inner, named));
        }
        Value::Array(items) => items.iter().for_each(|inner| tools_named(inner, named)),
        _ => {}
    }
}

/// `Type::"id"`. The type names are parsed once: Cedar's parser is not made for every call.
pub(crate) fn uid(type_name: &str, id: &str) -> EntityUid {
    static TYPES: std::sync::LazyLock<[EntityTypeName; 4]> = std::sync::LazyLock::new(|| {
        ["Caller", "Tool", "Role", "Action"].map(|name| {
            EntityTypeName::from_str(name).expect("toolgate's entity types are valid names")
        })
    });
    let type_name = match TYPES.iter().find(|known| known.basename() == type_name) {
        Some(known) => known.clone(),
        None => {
            EntityTypeName::from_str(type_name).expect("toolgate's entity types are valid names")
        }
    };
    EntityUid::from_type_name_and_id(type_name, EntityId::new(id))
}

/// A tool as the rules see it.
fn tool_entity(tool: &ToolDefinition) -> Entity {
    let string = |text: &str| RestrictedExpression::new_string(text.to_owned());
    let flag = RestrictedExpression::new_bool;
    let source = match &tool.source {
        Some(location) if location.file.ends_with(".rs") => "rust",
        Some(_) => "file",
        None => "other",
    };
    let tags = RestrictedExpression::new_set(tool.tags.iter().map(|tag| string(tag)));
    let mut attributes = HashMap::from([
        ("name".to_owned(), string(&tool.name)),
        (
            "permission".to_owned(),
            RestrictedExpression::new_entity_uid(uid("Role", &tool.permission)),
        ),
        ("risk".to_owned(), string(tool.risk.as_str())),
        ("read_only".to_owned(), flag(tool.hints.read_only)),
        ("destructive".to_owned(), flag(tool.hints.destructive)),
        ("idempotent".to_owned(), flag(tool.hints.idempotent)),
        ("open_world".to_owned(), flag(tool.hints.open_world)),
        ("tags".to_owned(), tags),
        ("source".to_owned(), string(source)),
    ]);
    if let Some(group) = &tool.group {
        attributes.insert("group".to_owned(), string(group));
    }
    Entity::new(uid("Tool", &tool.name), attributes, Default::default())
        .unwrap_or_else(|_| Entity::with_uid(uid("Tool", &tool.name)))
}
