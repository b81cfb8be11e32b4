//! Cedar rules over who, which tool and which arguments, in process: the three actions
//! (`see`, `call`, `approve`), the rules that decided in the record, how rules meet roles,
//! build problems with file and line, reloading while serving.

mod cedar_world;

use cedar_world::*;
use serde_json::json;
use toolgate::cedar::CedarPolicies;
use toolgate::prelude::*;

fn denied_because(outcome: &ToolOutcome, says: &str) {
    let error = outcome
        .error()
        .unwrap_or_else(|| panic!("denied: {outcome:?}"));
    assert_eq!(error.code, ErrorCode::Denied, "{error:?}");
    assert!(
        error.message.contains(says),
        "{says:?} in {}",
        error.message
    );
}

#[tokio::test]
async fn calls_are_decided_by_their_typed_arguments() {
    let clinic = clinic();
    let ann = staff("ann");
    // 1: within every rule.
    let small = call(&clinic, &ann, "refund", json!({"amount": 50})).await;
    assert_eq!(small.result.unwrap(), "refunded 50");
    // 2: a permit with @approval among those that decided: a person is asked.
    let large = call(&clinic, &ann, "refund", json!({"amount": 150})).await;
    let waiting = large.error().unwrap();
    assert_eq!(waiting.code, ErrorCode::ApprovalRequired);
    assert!(
        waiting.message.contains("approved by a second person"),
        "{}",
        waiting.message
    );
    assert!(
        waiting.message.contains("refunds over 100 need approval"),
        "{}",
        waiting.message
    );
    // 3: forbid beats permit, with the forbid's reason and its id.
    let huge = call(&clinic, &ann, "refund", json!({"amount": 5000})).await;
    denied_because(&huge, "refunds over 1000 are never made here");
    // 4-6: the caller's own id against an argument.
    let bo = customer("bo");
    let own = call(
        &clinic,
        &bo,
        "read_pet_record",
        json!({"owner": "bo", "pet": "Rex"}),
    )
    .await;
    assert!(own.result.is_ok(), "{own:?}");
    let other = call(
        &clinic,
        &bo,
        "read_pet_record",
        json!({"owner": "cy", "pet": "Tom"}),
    )
    .await;
    denied_because(&other, "their own pets");
    let by_staff = call(
        &clinic,
        &ann,
        "read_pet_record",
        json!({"owner": "cy", "pet": "Tom"}),
    )
    .await;
    assert!(by_staff.result.is_ok(), "{by_staff:?}");
}

#[tokio::test]
async fn the_time_decides_too() {
    let at_night = registry_with(rules_at(3));
    let at_noon = clinic();
    let ann = staff("ann");
    let arguments = json!({"before": "2020-01-01"});
    // 7-8.
    let night = call(&at_night, &ann, "delete_records", arguments.clone()).await;
    denied_because(&night, "only from 08:00 to 18:00");
    // At noon the rules let it through to the registry's policy, which asks a person
    // before a destructive tool runs.
    let noon = call(&at_noon, &ann, "delete_records", arguments).await;
    let waiting = noon.error().unwrap();
    assert_eq!(waiting.code, ErrorCode::ApprovalRequired, "{waiting:?}");
    assert!(
        waiting.message.contains("is destructive"),
        "{}",
        waiting.message
    );
    // 9: the rule is on destructive tools only.
    let reading = call(&at_night, &ann, "clinic_hours", json!({})).await;
    assert!(reading.result.is_ok());
    // 10: `context.now` is a datetime rules compare.
    let dated = CedarPolicies::new().text(
        "dated.cedar",
        r#"@id("closed since 2001") @reason("the clinic closed in 2001")
           forbid (principal, action == Action::"call:clinic_hours", resource)
           when { context.now > datetime("2001-01-01") };"#,
    );
    let closed = call(&registry_with(dated), &ann, "clinic_hours", json!({})).await;
    denied_because(&closed, "closed in 2001");
}

#[tokio::test]
async fn a_tool_no_rule_lets_a_caller_see_is_unknown_to_it_everywhere() {
    let clinic = clinic();
    let (ann, temp) = (staff("ann"), contractor("temp"));
    // 10-11: the listing.
    assert!(seen(&clinic, &ann).contains(&"invoice_list".to_owned()));
    assert!(!seen(&clinic, &temp).contains(&"invoice_list".to_owned()));
    assert!(
        clinic
            .search(&temp, "invoices list", 5)
            .iter()
            .all(|hit| hit.definition.name != "invoice_list")
    );
    // 12-13: a call, answered exactly as a call of a tool that does not exist.
    let hidden = call(&clinic, &temp, "invoice_list", json!({})).await;
    let missing = call(&clinic, &temp, "invoice_lists_all", json!({})).await;
    let (hidden, missing) = (hidden.error().unwrap(), missing.error().unwrap());
    assert_eq!(hidden.code, ErrorCode::UnknownTool);
    assert_eq!(missing.code, ErrorCode::UnknownTool);
    assert_eq!(
        hidden.message.replace("invoice_list", "X"),
        missing.message.replace("invoice_lists_all", "X")
    );
    let seen_by_ann = call(&clinic, &ann, "invoice_list", json!({})).await;
    assert!(seen_by_ann.result.is_ok());
    // 14: listing and calling agree, for every caller and tool.
    for caller in [customer("bo"), ann, temp, admin("ada")] {
        for tool in [
            "clinic_hours",
            "refund",
            "read_pet_record",
            "delete_records",
            "invoice_list",
        ] {
            let listed = seen(&clinic, &caller).contains(&tool.to_owned());
            let arguments = match tool {
                "refund" => json!({"amount": 1}),
                "read_pet_record" => json!({"owner": caller.id(), "pet": "Rex"}),
                "delete_records" => json!({"before": "2020-01-01"}),
                _ => json!({}),
            };
            let outcome = call(&clinic, &caller, tool, arguments).await;
            let unknown = outcome
                .error()
                .is_some_and(|error| error.code == ErrorCode::UnknownTool);
            assert_eq!(listed, !unknown, "{} / {tool}: {outcome:?}", caller.id());
        }
    }
}

#[tokio::test]
async fn the_record_names_the_rules_that_decided() {
    let clinic = clinic();
    let ann = staff("ann");
    call(&clinic, &ann, "refund", json!({"amount": 50})).await;
    call(&clinic, &ann, "refund", json!({"amount": 5000})).await;
    let history = clinic.history("ann", 2).await.unwrap();
    // 15-16.
    assert_eq!(
        history[0].decision,
        "refused_by_stage (stages: cedar: forbidden by `refunds over 1000 are never made`; cedar: refused the call)"
    );
    assert_eq!(
        history[1].decision,
        "allow (stages: cedar: permitted by `toolgate.roles`)"
    );
}

#[tokio::test]
async fn who_may_decide_a_waiting_call_is_a_rule_too() {
    let clinic = clinic();
    let (ann, bob, ada) = (staff("ann"), staff("bob"), admin("ada"));
    let ticket = |outcome: &ToolOutcome| {
        outcome.error().unwrap().details.as_ref().unwrap()["ticket"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let modest = ticket(&call(&clinic, &bob, "refund", json!({"amount": 300})).await);
    let large = ticket(&call(&clinic, &bob, "refund", json!({"amount": 700})).await);
    let listed = |approver| {
        let clinic = clinic.clone();
        async move {
            let pending = clinic.pending_approvals(&approver).await.unwrap();
            pending
                .iter()
                .map(|call| call.arguments["amount"].as_i64().unwrap())
                .collect::<Vec<_>>()
        }
    };
    // 17-19: bob decides none of his own; ann the modest one only; the admin both.
    assert!(listed(bob.clone()).await.is_empty());
    assert_eq!(listed(ann.clone()).await, [300]);
    let mut by_admin = listed(ada.clone()).await;
    by_admin.sort();
    assert_eq!(by_admin, [300, 700]);
    // 20-22: redeeming follows the same rules.
    assert!(
        clinic.approve(&modest, &bob).await.is_err(),
        "nobody approves their own"
    );
    assert!(
        clinic.approve(&large, &ann).await.is_err(),
        "large ones need an admin"
    );
    assert_eq!(
        clinic.approve(&modest, &ann).await.unwrap().result.unwrap(),
        "refunded 300"
    );
    assert_eq!(
        clinic.approve(&large, &ada).await.unwrap().result.unwrap(),
        "refunded 700"
    );
}

#[tokio::test]
async fn rules_narrow_a_role_and_never_widen_it() {
    let widening = CedarPolicies::new().text(
        "widen.cedar",
        r#"@id("customers may refund") permit (principal in Role::"customer", action in [Action::"see", Action::"call:refund"], resource == Tool::"refund");"#,
    );
    let clinic = registry_with(widening);
    let bo = customer("bo");
    // 23-24: a permit above the role changes nothing: the tool stays unknown.
    assert!(!seen(&clinic, &bo).contains(&"refund".to_owned()));
    let refused = call(&clinic, &bo, "refund", json!({"amount": 1})).await;
    assert_eq!(refused.error().unwrap().code, ErrorCode::UnknownTool);
    // 25-26: a forbid within the role takes the tool away.
    let narrowing = CedarPolicies::new().text(
        "narrow.cedar",
        r#"@id("no refunds by staff") @reason("refunds are the admins'") forbid (principal, action == Action::"call:refund", resource) unless { principal in Role::"admin" };"#,
    );
    let clinic = registry_with(narrowing);
    denied_because(
        &call(&clinic, &staff("ann"), "refund", json!({"amount": 1})).await,
        "refunds are the admins'",
    );
    assert!(
        call(&clinic, &admin("ada"), "refund", json!({"amount": 1}))
            .await
            .result
            .is_ok()
    );
    // 27-28: without the roles' own rule, only what is permitted is there at all.
    let only = CedarPolicies::new()
        .text("only.cedar", r#"permit (principal, action in [Action::"see", Action::"call"], resource == Tool::"clinic_hours");"#)
        .without_role_rules();
    let clinic = registry_with(only);
    assert_eq!(seen(&clinic, &admin("ada")), ["clinic_hours"]);
    let refund = call(&clinic, &admin("ada"), "refund", json!({"amount": 1})).await;
    assert_eq!(refund.error().unwrap().code, ErrorCode::UnknownTool);
}

#[tokio::test]
async fn a_dry_run_reports_what_the_rules_would_decide() {
    let clinic = clinic();
    let ann = staff("ann");
    let dry = |amount: i64| {
        let (clinic, ann) = (clinic.clone(), ann.clone());
        async move {
            let options = CallOptions {
                dry_run: true,
                ..CallOptions::default()
            };
            let call = ToolCall::new("d", "refund", json!({"amount": amount}));
            clinic.call_with(&ann, call, options).await.result
        }
    };
    // 29-31.
    assert_eq!(dry(50).await.unwrap()["decision"], "allow");
    assert_eq!(dry(150).await.unwrap()["decision"], "require_approval");
    let refused = dry(5000).await.unwrap();
    assert_eq!(refused["decision"], "deny", "{refused}");
    assert!(refused["reason"].as_str().unwrap().contains("never made"));
}

/// The one build problem of `rules` (as the file `rules.cedar`), as said.
fn problem_of(rules: &str) -> String {
    let policies = CedarPolicies::new()
        .text("rules.cedar", rules)
        .claim("contractor", "Bool");
    let built = Registry::builder()
        .roles(["public", "customer", "staff", "admin"])
        .filter_linked(|tool| tool.group.as_deref() == Some(GROUP))
        .cedar(policies)
        .build();
    let error = built
        .err()
        .unwrap_or_else(|| panic!("refused at build: {rules}"));
    let problems: Vec<String> = error.problems().iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    problems[0].clone()
}

#[test]
fn rules_that_do_not_fit_the_tools_fail_the_build_with_file_and_line() {
    let cases = [
        // An argument the tool does not have, with Cedar's hint.
        (
            "\n\nforbid (principal, action == Action::\"call:refund\", resource)\nwhen { context.arguments.amout > 5 };",
            "rules.cedar:4:",
            "did you mean `amount`?",
        ),
        // The wrong type.
        (
            "forbid (principal, action == Action::\"call:refund\", resource)\nwhen { context.arguments.amount == \"lots\" };",
            "rules.cedar:2:",
            "are not compatible",
        ),
        // A tool that is not registered.
        (
            "\nforbid (principal, action, resource == Tool::\"refnd\");",
            "rules.cedar:2:",
            "the tool `refnd`, which is not registered (did you mean `refund`?)",
        ),
        // An action of a tool that is not registered.
        (
            "forbid (principal, action == Action::\"call:refnd\", resource);",
            "rules.cedar:1:",
            "call:refnd",
        ),
        // A role that is not the registry's.
        (
            "forbid (principal in Role::\"stafff\", action, resource);",
            "rules.cedar:1:",
            "valid entity eids: \"public\", \"customer\", \"staff\", \"admin\"",
        ),
        // A claim that was not declared.
        (
            "forbid (principal, action, resource)\nwhen { principal.claims has department };",
            "rules.cedar:1:",
            "a `has` test of a claim that is not declared",
        ),
        (
            "forbid (principal, action, resource)\nwhen { principal.claims.department == \"x\" };",
            "rules.cedar:2:",
            "claims.department",
        ),
        // Syntax.
        (
            "forbid (principal, action, resource) when { 1 + };",
            "rules.cedar:1:",
            "unexpected token",
        ),
        // An argument with no exact Cedar type says why.
        (
            "forbid (principal, action == Action::\"call:price_check\", resource)\nwhen { context.arguments.price > 5 };",
            "rules.cedar:2:",
            "`price` of `price_check` is not in the typed arguments: it is a number that may have a fraction",
        ),
    ];
    for (rules, place, says) in cases {
        let problem = problem_of(rules);
        assert!(
            problem.starts_with(place),
            "{place} for {rules:?}: {problem}"
        );
        assert!(problem.contains(says), "{says:?} in {problem}");
    }
}

#[test]
fn a_claim_of_no_cedar_type_is_a_build_problem() {
    let policies = CedarPolicies::new().claim("age", "Number");
    let error = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .cedar(policies)
        .build()
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .contains("the claim `age` is declared as `Number`"),
        "{error}"
    );
}

#[tokio::test]
async fn rules_reloaded_while_serving_take_effect_at_once_or_not_at_all() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("clinic.cedar");
    std::fs::write(&file, "@id(\"small refunds only\") forbid (principal, action == Action::\"call:refund\", resource) when { context.arguments.amount > 10 };").unwrap();
    let clinic = registry_with(CedarPolicies::new().folder(folder.path()));
    let ann = staff("ann");
    denied_because(
        &call(&clinic, &ann, "refund", json!({"amount": 50})).await,
        "small refunds only",
    );
    // A good change decides from now on.
    std::fs::write(&file, "@id(\"refunds up to 100\") forbid (principal, action == Action::\"call:refund\", resource) when { context.arguments.amount > 100 };").unwrap();
    clinic.reload_rules().unwrap();
    refunds_stop_at_100(&clinic, &ann).await;
    // A broken one is refused with its line; the last good set keeps deciding.
    std::fs::write(&file, "\n\nforbid (principal, action == Action::\"call:refund\", resource) when { context.arguments.amnt > 1 };").unwrap();
    let problems = clinic.reload_rules().unwrap_err();
    assert_eq!(problems[0].line, Some(3), "{problems:?}");
    assert!(problems[0].file.ends_with("clinic.cedar"));
    assert_eq!(clinic.rule_problems(), problems);
    refunds_stop_at_100(&clinic, &ann).await;
}

/// 50 euros are refunded, 500 are refused by the rule "refunds up to 100".
async fn refunds_stop_at_100(clinic: &Registry, ann: &Caller) {
    let small = call(clinic, ann, "refund", json!({"amount": 50})).await;
    assert!(small.result.is_ok(), "{small:?}");
    denied_because(
        &call(clinic, ann, "refund", json!({"amount": 500})).await,
        "refunds up to 100",
    );
}

/// A tool added while serving.
struct Appointments;

impl toolgate::Tool for Appointments {
    fn definition(&self) -> toolgate::ToolDefinition {
        let schema = json!({"type": "object", "properties": {"day": {"type": "integer"}}, "required": ["day"]});
        toolgate::ToolDefinition::new("book", "Books a day.", "customer", schema)
    }

    fn call(&self, _context: ToolContext, arguments: serde_json::Value) -> toolgate::ToolFuture {
        Box::pin(async move { Ok(json!(format!("booked {}", arguments["day"]))) })
    }
}

#[tokio::test]
async fn a_tool_registered_while_serving_is_decided_by_the_rules_at_once() {
    let rules = CedarPolicies::new().text(
        "book.cedar",
        "forbid (principal, action in Action::\"call\", resource) when { resource.name == \"book\" && context has arguments };",
    );
    let clinic = registry_with(rules);
    clinic.register(Appointments).unwrap();
    let bo = customer("bo");
    assert!(seen(&clinic, &bo).contains(&"book".to_owned()));
    denied_because(
        &call(&clinic, &bo, "book", json!({"day": 3})).await,
        "a rule forbids it",
    );
    assert!(clinic.rule_problems().is_empty());
}
