//! Who sees and runs what: role hierarchy, hidden tools, listing, build-time checks.

use std::sync::Arc;

use serde_json::json;
use toolgate::prelude::*;
use toolgate::{BuildProblem, FnTool, ToolDefinition};

/// Opening hours.
#[tool(permission = "public", group = "clinic", read_only)]
fn opening_hours() -> &'static str {
    "8-18"
}

/// A customer's pets.
#[tool(permission = "customer", group = "pets", read_only)]
fn my_pets(#[ctx] caller: Caller) -> String {
    format!("pets of {}", caller.id())
}

/// Every appointment.
#[tool(permission = "staff", group = "clinic", read_only)]
fn all_appointments() -> u32 {
    3
}

/// Server statistics.
#[tool(permission = "admin", group = "system")]
fn system_stats() -> u32 {
    99
}

const ROLES: [&str; 4] = ["public", "customer", "staff", "admin"];

fn registry() -> Registry {
    Registry::builder().roles(ROLES).build().unwrap()
}

fn names(registry: &Registry, role: &str) -> Vec<String> {
    registry
        .visible_to(&Caller::new("c", role))
        .iter()
        .map(|tool| tool.name.clone())
        .collect()
}

#[test]
fn each_role_sees_exactly_its_tools_and_those_below() {
    let registry = registry();
    assert_eq!(names(&registry, "public"), ["opening_hours"]);
    assert_eq!(names(&registry, "customer"), ["my_pets", "opening_hours"]);
    assert_eq!(
        names(&registry, "staff"),
        ["all_appointments", "my_pets", "opening_hours"]
    );
    assert_eq!(
        names(&registry, "admin"),
        [
            "all_appointments",
            "my_pets",
            "opening_hours",
            "system_stats"
        ]
    );
}

#[test]
fn a_caller_with_an_unconfigured_role_sees_and_runs_nothing() {
    let registry = registry();
    let stranger = Caller::new("x", "superuser");
    assert!(registry.visible_to(&stranger).is_empty());
    assert_eq!(*registry.visible_json(&stranger), json!([]));
    let outcome = futures::executor::block_on(async {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(registry.call(&stranger, ToolCall::new("1", "opening_hours", json!({}))))
    });
    assert_eq!(outcome.error().unwrap().code, ErrorCode::UnknownTool);
}

#[tokio::test]
async fn a_tool_above_the_role_answers_exactly_like_an_unknown_tool() {
    let registry = registry();
    let customer = Caller::new("c", "customer");
    let hidden = registry
        .call(&customer, ToolCall::new("1", "system_stats", json!({})))
        .await;
    // The very answer the same name gets once the tool does not exist at all (the
    // did-you-mean part depends on the name asked for and the visible tools only).
    assert!(registry.unregister("system_stats"));
    let missing = registry
        .call(&customer, ToolCall::new("1", "system_stats", json!({})))
        .await;
    let hidden = hidden.error().unwrap();
    let missing = missing.error().unwrap();
    assert_eq!(hidden.code, ErrorCode::UnknownTool);
    assert_eq!(hidden, missing);
    assert!(!hidden.message.contains("admin"), "{}", hidden.message);
    // The message lists what the caller may use, so a model can recover.
    assert!(
        hidden.message.contains("`my_pets`, `opening_hours`"),
        "{}",
        hidden.message
    );
    assert!(registry.definition(&customer, "system_stats").is_none());
}

#[tokio::test]
async fn hidden_tools_can_be_revealed_when_the_application_asks() {
    let registry = Registry::builder()
        .roles(ROLES)
        .reveal_hidden_tools(true)
        .build()
        .unwrap();
    let customer = Caller::new("c", "customer");
    let outcome = registry
        .call(&customer, ToolCall::new("1", "system_stats", json!({})))
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code.as_str(), "forbidden");
    let unknown = registry
        .call(&customer, ToolCall::new("1", "nope", json!({})))
        .await;
    assert_eq!(unknown.error().unwrap().code, ErrorCode::UnknownTool);
}

#[tokio::test]
async fn the_caller_reaches_the_tool() {
    let registry = registry();
    let outcome = registry
        .call(
            &Caller::new("user-42", "customer"),
            ToolCall::new("1", "my_pets", json!({})),
        )
        .await;
    assert_eq!(outcome.result.unwrap(), "pets of user-42");
}

#[test]
fn listing_by_group() {
    let registry = registry();
    let staff = Caller::new("s", "staff");
    assert_eq!(registry.groups_visible_to(&staff), ["clinic", "pets"]);
    let clinic: Vec<_> = registry
        .visible_in_group(&staff, "clinic")
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(clinic, ["all_appointments", "opening_hours"]);
    assert!(registry.visible_in_group(&staff, "system").is_empty());
}

#[test]
fn listings_are_computed_once_not_per_request() {
    let registry = registry();
    let staff = Caller::new("s", "staff");
    assert!(Arc::ptr_eq(
        &registry.visible_to(&staff),
        &registry.visible_to(&staff)
    ));
    assert!(Arc::ptr_eq(
        &registry.visible_json(&staff),
        &registry.visible_json(&staff)
    ));
    let json = registry.visible_json(&staff);
    assert_eq!(json.as_array().unwrap().len(), 3);
    assert_eq!(json[0]["name"], "all_appointments");
    assert_eq!(json[0]["input_schema"]["type"], "object");
}

#[test]
fn definitions_carry_everything_a_provider_needs() {
    let registry = registry();
    let definition = registry
        .definition(&Caller::new("a", "admin"), "opening_hours")
        .unwrap();
    assert_eq!(definition.description, "Opening hours.");
    assert_eq!(definition.permission, "public");
    assert_eq!(definition.group.as_deref(), Some("clinic"));
    assert!(definition.hints.read_only);
    assert_eq!(
        definition.input_schema,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(definition.output_schema, Some(json!({"type": "string"})));
    let source = definition.source.as_ref().unwrap();
    assert!(source.file.ends_with("roles.rs"), "{source}");
}

#[test]
fn a_permission_naming_no_role_fails_the_build_with_tool_location_and_roles() {
    let error = Registry::builder()
        .roles(["public", "customer", "staff"])
        .build()
        .unwrap_err();
    let [
        BuildProblem::UnknownPermission {
            tool,
            location,
            permission,
            known_roles,
        },
    ] = error.problems()
    else {
        panic!("expected one problem: {error}");
    };
    assert_eq!(
        (tool.as_str(), permission.as_str()),
        ("system_stats", "admin")
    );
    assert_eq!(known_roles, &["public", "customer", "staff"]);
    assert!(location.as_ref().unwrap().file.ends_with("roles.rs"));
    let text = error.to_string();
    assert!(text.contains("tool `system_stats` (defined at "), "{text}");
    assert!(
        text.contains("the roles are \"public\", \"customer\", \"staff\""),
        "{text}"
    );
}

#[test]
fn every_problem_is_listed_at_once() {
    let bad_name = ToolDefinition::new("bad name", "d", "public", json!({"type": "object"}));
    let bad_schema = ToolDefinition::new("bad_schema", "d", "ghost", json!({"type": "string"}));
    let error = Registry::builder()
        .roles(["public", "public"])
        .tool(FnTool::new(bad_name, |_, _| async { Ok(json!(null)) }))
        .tool(FnTool::new(bad_schema, |_, _| async { Ok(json!(null)) }))
        .build()
        .unwrap_err();
    let text = error.to_string();
    for expected in [
        "the role \"public\" appears more than once",
        "the tool name \"bad name\" is invalid",
        "tool `bad_schema` (registered at run time) requires permission \"ghost\"",
        "tool `bad_schema` has an invalid input schema: the root must have `\"type\": \"object\"`",
        "tool `my_pets`",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

#[test]
fn no_roles_is_an_error() {
    let error = Registry::builder().linked_tools(false).build().unwrap_err();
    assert_eq!(error.problems(), &[BuildProblem::NoRoles]);
}

#[test]
fn an_empty_registry_builds_but_is_empty() {
    let registry = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .build()
        .unwrap();
    assert!(registry.is_empty());
    assert!(registry.visible_to(&Caller::new("p", "public")).is_empty());
}

#[test]
fn linked_tools_can_be_filtered_by_group() {
    let registry = Registry::builder()
        .roles(ROLES)
        .filter_linked(|tool| tool.group.as_deref() == Some("clinic"))
        .build()
        .unwrap();
    assert_eq!(
        names(&registry, "admin"),
        ["all_appointments", "opening_hours"]
    );
}

#[test]
fn lists_differ_by_role_only_when_some_tool_is_above_the_lowest_role() {
    assert!(registry().lists_differ_by_role());
    let everyone_alike = Registry::builder()
        .roles(ROLES)
        .filter_linked(|tool| tool.permission == "public")
        .build()
        .unwrap();
    assert!(!everyone_alike.lists_differ_by_role());
}
