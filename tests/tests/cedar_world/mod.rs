//! What the rules tests share: a clinic's tools, its rules, and callers of each role.
#![allow(dead_code)]

use serde_json::{Value, json};
use toolgate::cedar::CedarPolicies;
use toolgate::prelude::*;
use toolgate_test_support::utc_offset_for_hour;

/// The group of this file's tools.
pub const GROUP: &str = "cedar_tests";

/// Opening hours, for everyone.
#[tool(permission = "public", group = "cedar_tests", read_only)]
fn clinic_hours() -> String {
    "08:00-18:00".into()
}

/// Refunds a payment.
#[tool(permission = "staff", group = "cedar_tests")]
fn refund(
    /// In whole euros.
    amount: i64,
    /// Why.
    reason: Option<String>,
) -> String {
    let _ = reason;
    format!("refunded {amount}")
}

/// A pet's medical record.
#[tool(permission = "customer", group = "cedar_tests", read_only)]
fn read_pet_record(
    /// The owner's id.
    owner: String,
    /// The pet's name.
    pet: String,
) -> String {
    format!("record of {pet} ({owner})")
}

/// Deletes old records.
#[tool(permission = "staff", group = "cedar_tests", destructive)]
fn delete_records(
    /// Records older than this date are deleted.
    before: String,
) -> String {
    format!("deleted before {before}")
}

/// The clinic's invoices.
#[tool(permission = "staff", group = "billing", read_only, tags = ["cedar_tests"])]
fn invoice_list() -> Vec<String> {
    vec!["INV-1".into()]
}

/// A price check, with a price that may have cents.
#[tool(permission = "staff", group = "cedar_tests", read_only)]
fn price_check(
    /// The price.
    price: f64,
) -> bool {
    price > 0.0
}

/// The clinic's rules.
pub const RULES: &str = r#"
@id("refunds over 100 need approval")
@approval("refunds over 100 are approved by a second person")
permit (principal in Role::"staff", action == Action::"call:refund", resource)
when { context.arguments.amount > 100 };

@id("refunds over 1000 are never made")
@reason("refunds over 1000 are never made here")
forbid (principal, action == Action::"call:refund", resource)
when { context.arguments.amount > 1000 };

@id("own pets only")
@reason("customers read only their own pets' records")
forbid (principal, action == Action::"call:read_pet_record", resource)
when { !(principal in Role::"staff") && context.arguments.owner != principal.id };

@id("quiet hours")
@reason("destructive tools run only from 08:00 to 18:00")
forbid (principal, action in Action::"call", resource)
when { resource.destructive && (context.hour < 8 || context.hour >= 18) };

@id("contractors never see billing")
forbid (principal, action in [Action::"see", Action::"call"], resource)
when { resource has group && resource.group == "billing"
       && principal.claims has contractor && principal.claims.contractor };

@id("nobody approves their own refund")
forbid (principal, action == Action::"approve:refund", resource)
when { context.requester.id == principal.id };

@id("large refunds are approved by an admin")
forbid (principal, action == Action::"approve:refund", resource)
when { context.arguments.amount > 500 && !(principal in Role::"admin") };
"#;

/// The clinic's rules, on a clock at `hour`.
pub fn rules_at(hour: i64) -> CedarPolicies {
    CedarPolicies::new()
        .text("clinic.cedar", RULES)
        .claim("contractor", "Bool")
        .claim("groups", "Set<String>")
        .utc_offset_minutes(utc_offset_for_hour(hour))
}

/// The clinic's registry (staff approve), with `rules`.
pub fn registry_with(rules: CedarPolicies) -> Registry {
    Registry::builder()
        .roles(["public", "customer", "staff", "admin"])
        .approver_role("staff")
        .approval_key(b"a key of at least thirty-two bytes, for tests".to_vec())
        .filter_linked(|tool| {
            tool.group.as_deref() == Some(GROUP) || tool.tags.iter().any(|tag| tag == GROUP)
        })
        .cedar(rules)
        .build()
        .unwrap()
}

/// The clinic at noon.
pub fn clinic() -> Registry {
    registry_with(rules_at(12))
}

pub fn customer(id: &str) -> Caller {
    Caller::new(id, "customer")
}

pub fn staff(id: &str) -> Caller {
    Caller::new(id, "staff")
}

pub fn admin(id: &str) -> Caller {
    Caller::new(id, "admin")
}

/// A staff member identified by a token whose claims say they are a contractor.
pub fn contractor(id: &str) -> Caller {
    let claims = json!({"sub": id, "contractor": true, "groups": ["temps"]});
    Caller::new(id, "staff").with_identity(
        "https://id.example.com",
        claims.as_object().unwrap().clone(),
    )
}

/// The outcome of one call.
pub async fn call(
    registry: &Registry,
    caller: &Caller,
    tool: &str,
    arguments: Value,
) -> ToolOutcome {
    registry
        .call(caller, ToolCall::new("c1", tool, arguments))
        .await
}

/// The names of the tools `caller` sees.
pub fn seen(registry: &Registry, caller: &Caller) -> Vec<String> {
    let mut names: Vec<String> = registry
        .visible_to(caller)
        .iter()
        .map(|tool| tool.name.clone())
        .collect();
    names.sort();
    names
}
