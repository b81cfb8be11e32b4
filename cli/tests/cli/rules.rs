//! `policies` in `toolgate.toml`: Cedar rules over tool files' typed arguments, refused at
//! their line when they do not fit the tools, read again while `toolgate serve` runs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Project, Serving};

const CONFIG: &str = r#"
roles = ["public", "staff", "admin"]
user_tools = false
policy = "auto"
policies = "policies"
policy_claims = {contractor = "Bool"}

[callers.sam]
role = "staff"
token_env = "SAM_TOKEN"

[sandbox]
root = "work"
"#;

/// A tool file with an integer `amount`.
const REFUND: &str = "---\nname: refund\ndescription: Refund a payment.\npermission: staff\nparameters:\n  amount: {type: integer}\ncommand: {program: echo, args: [\"refunded\"], output: text}\n---\n";

const SMALL_REFUNDS: &str = "@id(\"small refunds\")\n@reason(\"refunds are at most 100\")\nforbid (principal, action == Action::\"call:refund\", resource)\nwhen { context.arguments.amount > 100 };\n";

fn project(rules: &str) -> Project {
    let project = Project::new(CONFIG);
    project.write(".toolgate/tools/refund.md", REFUND);
    project.write("policies/refunds.cedar", rules);
    project
}

#[test]
fn rules_decide_calls_of_tool_files_by_their_typed_arguments() {
    let project = project(SMALL_REFUNDS);
    let small = project
        .run(&["call", "refund", "--amount", "50", "--as", "sam"], "")
        .expect(0);
    assert!(small.stdout().contains("refunded"), "{}", small.stdout());
    let large = project.run(&["call", "refund", "--amount", "500", "--as", "sam"], "");
    assert_ne!(large.code(), 0);
    let said = format!("{}{}", large.stdout(), large.stderr());
    assert!(said.contains("refunds are at most 100"), "{said}");
}

#[test]
fn a_rule_that_does_not_fit_a_tool_file_is_refused_at_its_line() {
    let broken = "// refunds\n\nforbid (principal, action == Action::\"call:refund\", resource)\nwhen { context.arguments.amont > 100 };\n";
    let project = project(broken);
    let ran = project.run(&["tools", "list"], "").expect(2);
    let error = ran.stderr();
    assert_eq!(error.lines().count(), 1, "one line: {error}");
    assert!(error.contains("policies/refunds.cedar:4: "), "{error}");
    assert!(error.contains("did you mean `amount`?"), "{error}");
    let claims = Project::new(&CONFIG.replace("policies = \"policies\"\n", ""));
    let ran = claims.run(&["tools", "list"], "").expect(2);
    assert!(
        ran.stderr()
            .contains("toolgate.toml:5: `policy_claims` declares `contractor`"),
        "{}",
        ran.stderr()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_changed_while_serving_decide_at_once_and_broken_ones_are_refused() {
    let project = project(SMALL_REFUNDS);
    let server = tokio::task::block_in_place(|| {
        Serving::start(
            &project,
            &["http", "127.0.0.1:0"],
            &[("SAM_TOKEN", "sam-token")],
        )
    });
    let refund = |amount: i64| {
        let url = format!("{}/tools/call", server.url);
        async move {
            let body = json!({"name": "refund", "arguments": {"amount": amount}});
            let client = reqwest::Client::new();
            let answer: Value = client
                .post(url)
                .bearer_auth("sam-token")
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            answer
        }
    };
    assert_eq!(refund(50).await["ok"], true);
    assert_eq!(refund(500).await["ok"], false);
    // A stricter rule is read while serving.
    project.write(
        "policies/refunds.cedar",
        &SMALL_REFUNDS
            .replace("> 100", "> 10")
            .replace("at most 100", "at most 10"),
    );
    assert!(
        eventually(|| async { refund(50).await["ok"] == false }).await,
        "the new rule decides"
    );
    // A broken one is refused; the rule deciding before stays.
    project.write(
        "policies/refunds.cedar",
        "forbid (principal, action, resource) when { 1 + };",
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(refund(5).await["ok"], true);
    let refused = refund(50).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 10"),
        "{refused}"
    );
}

async fn eventually<F: std::future::Future<Output = bool>>(mut check: impl FnMut() -> F) -> bool {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}
