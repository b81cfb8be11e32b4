//! Approval: asked on the terminal (answered through stdin here), "always" kept in the
//! configured state across processes, and calls waiting in a server decided with
//! `toolgate approvals`.

use serde_json::json;

use crate::support::{Project, Serving};

const CONFIG: &str = r#"
roles = ["public", "staff", "admin"]
audit_file = "audit.jsonl"
state = "sqlite:state.db"
approval_key_env = "TEST_APPROVAL_KEY"

[callers.sam]
role = "staff"
token_env = "SAM_TOKEN"

[callers.ada]
role = "admin"
token_env = "ADA_TOKEN"

[sandbox]
root = "work"
"#;

const WIPE: &str = "---\nname: wipe\ndescription: Remove a file of the sandbox.\npermission: staff\ndestructive: true\nparameters:\n  file: {type: string}\ncommand: {program: ./scripts/wipe.sh}\n---\n";

fn project() -> Project {
    let project = Project::new(CONFIG);
    project.write(".toolgate/tools/wipe.md", WIPE);
    project.script(
        ".toolgate/tools/scripts/wipe.sh",
        "#!/bin/sh\nread -r args\necho wiped >> wiped.log\necho done\n",
    );
    project
}

fn call(project: &Project, answer: &str) -> crate::support::Ran {
    project.run_with(
        project
            .command()
            .args(["call", "wipe", "--file", "a.txt", "--as", "sam"])
            .env("TEST_APPROVAL_KEY", "k".repeat(32)),
        answer,
    )
}

fn wiped(project: &Project) -> usize {
    std::fs::read_to_string(project.path().join("work/wiped.log"))
        .map(|log| log.lines().count())
        .unwrap_or(0)
}

#[test]
fn the_terminal_is_asked_and_always_is_kept() {
    let project = project();
    let denied = call(&project, "n\n").expect(3);
    assert!(
        denied.stderr().contains("Run it? [y/N/always]"),
        "{}",
        denied.stderr()
    );
    assert!(
        denied.stderr().contains("approval_denied"),
        "{}",
        denied.stderr()
    );
    assert_eq!(wiped(&project), 0);
    let no_answer = call(&project, "").expect(3);
    assert!(
        no_answer.stderr().contains("no answer was given"),
        "{}",
        no_answer.stderr()
    );
    call(&project, "y\n").expect(0);
    assert_eq!(wiped(&project), 1);
    call(&project, "always\n").expect(0);
    // A later process finds the grant in the state file and does not ask.
    let granted = call(&project, "").expect(0);
    assert!(
        !granted.stderr().contains("Run it?"),
        "{}",
        granted.stderr()
    );
    assert_eq!(wiped(&project), 3);
    let permissions = project
        .run_with(
            project
                .command()
                .args(["tools", "permissions", "--json"])
                .env("TEST_APPROVAL_KEY", "k".repeat(32)),
            "",
        )
        .expect(0)
        .json();
    assert_eq!(permissions["grants"][0]["caller"], "sam");
    assert_eq!(permissions["grants"][0]["tool"], "wipe");
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_waiting_in_a_server_are_decided_from_the_command_line() {
    let project = project();
    let key = "k".repeat(32);
    let envs = [
        ("TEST_APPROVAL_KEY", key.as_str()),
        ("SAM_TOKEN", "sam-token"),
        ("ADA_TOKEN", "ada-token"),
    ];
    let server = Serving::start(&project, &["http", "127.0.0.1:0"], &envs);
    let client = reqwest::Client::new();
    for file in ["one.txt", "two.txt"] {
        let answer: serde_json::Value = client
            .post(format!("{}/tools/call", server.url))
            .header("authorization", "Bearer sam-token")
            .json(&json!({"name": "wipe", "arguments": {"file": file}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["error"]["code"], "approval_required", "{answer}");
    }

    let approvals = |args: &[&str]| {
        tokio::task::block_in_place(|| {
            project.run_with(project.command().args(args).envs(envs), "")
        })
    };
    let listed = approvals(&["approvals", "list", "--json"]).expect(0).json();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0]["caller"], "sam");
    let first = listed[0]["ticket_id"].as_str().unwrap();
    let second = listed[1]["ticket_id"].as_str().unwrap();
    // A staff member may not decide; the call stays waiting.
    approvals(&["approvals", "approve", first, "--as", "sam"]).expect(1);
    let approved = approvals(&["approvals", "approve", first]).expect(0);
    assert!(
        approved.stdout().contains("approved:"),
        "{}",
        approved.stdout()
    );
    assert_eq!(wiped(&project), 1);
    let again = approvals(&["approvals", "approve", first]).expect(1);
    assert!(
        again.stderr().contains("decided already"),
        "{}",
        again.stderr()
    );
    let denied = approvals(&["approvals", "deny", second, "--reason", "not today"]).expect(0);
    assert!(denied.stdout().contains("not today"), "{}", denied.stdout());
    assert_eq!(wiped(&project), 1);
    assert_eq!(
        approvals(&["approvals", "list", "--json"]).expect(0).json(),
        json!([])
    );
    // The server and the command wrote one audit trail: the two waiting calls, the
    // approved one's run, the denial.
    let verified = approvals(&["audit", "verify"]).expect(0);
    let records: u64 = verified
        .stdout()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(records >= 4, "{}", verified.stdout());
    let trail = std::fs::read_to_string(project.path().join("audit.jsonl")).unwrap();
    assert!(
        trail.contains("\"decision\":\"approval_denied\""),
        "the denial is in the one trail: {trail}"
    );
}
