//! What the config's keys do: limits and rates (kept across processes in `state`), the
//! audit in the state database, provider compatibility of tool files, more sandbox roots,
//! search, help.

use crate::support::{BASE, Project};

const ECHO: &str = "---\nname: echo_text\ndescription: Repeat a text.\npermission: public\nread_only: true\nparameters: {text: string}\ncommand: {program: cat, output: json}\n---\n";

#[test]
fn rates_and_argument_limits_hold_and_the_state_keeps_the_audit() {
    let project = Project::new(
        "roles = [\"public\"]\nuser_tools = false\nstate = \"sqlite:state.db\"\napproval_key_env = \"TEST_KEY\"\n\n[arguments]\nmax_bytes = 200\n\n[rate_limits]\nper_caller = \"2/min\"\n\n[sandbox]\nroot = \"work\"\n",
    );
    project.write(".toolgate/tools/echo.md", ECHO);
    let run = |args: &[&str]| {
        project.run_with(
            project.command().args(args).env("TEST_KEY", "k".repeat(32)),
            "",
        )
    };
    let too_big = "x".repeat(300);
    let refused = run(&["call", "echo_text", "--text", &too_big]).expect(1);
    assert!(
        refused.stderr().contains("arguments_too_large"),
        "{}",
        refused.stderr()
    );
    run(&["call", "echo_text", "--text", "one"]).expect(0);
    // Each call is a new process: the budget is in the state database.
    let limited = run(&["call", "echo_text", "--text", "two"]);
    let limited = if limited.code() == 0 {
        run(&["call", "echo_text", "--text", "three"])
    } else {
        limited
    };
    let limited = limited.expect(1);
    assert!(
        limited.stderr().contains("rate_limited"),
        "{}",
        limited.stderr()
    );

    let verified = run(&["audit", "verify"]).expect(0);
    assert!(
        verified
            .stdout()
            .contains("records in the state database, chain intact"),
        "{}",
        verified.stdout()
    );
    let tail = run(&["audit", "tail", "--caller", "cli", "--json"]).expect(0);
    let outcomes: Vec<String> = tail
        .stdout()
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["outcome"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(
        outcomes.contains(&"ok".to_owned()) && outcomes.contains(&"rate_limited".to_owned()),
        "{outcomes:?}"
    );
}

#[test]
fn a_tool_file_a_required_provider_cannot_use_is_refused() {
    let project = Project::new(&format!("providers = [\"openai\"]\n{BASE}"));
    project.write(".toolgate/tools/echo.md", ECHO);
    project.write(
        ".toolgate/tools/open_map.md",
        "---\nname: open_map\ndescription: Takes any map.\npermission: public\nparameters:\n  type: object\n  properties:\n    labels: {type: object, minProperties: 1}\ncommand: {program: cat}\n---\n",
    );
    let validated = project.run(&["tools", "validate"], "").expect(1);
    let out = validated.stdout();
    assert!(
        out.contains("open_map.md:5: tool `open_map` cannot be used with OpenAI"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|line| line.starts_with("ok") && line.contains("echo.md")),
        "{out}"
    );
    let wrong = Project::new(&format!("providers = [\"openia\"]\n{BASE}"));
    let refused = wrong.run(&["tools", "list"], "").expect(2);
    assert!(
        refused.stderr().contains("`openia` is not a provider"),
        "{}",
        refused.stderr()
    );
}

#[test]
fn more_sandbox_roots_search_and_help() {
    let project = Project::new(&format!(
        "{BASE}\n[sandbox.roots]\ndocs = \"documents\"\n\n[ready.files]\npermission = \"public\"\ntools = [\"read_file\"]\n"
    ));
    project.write("documents/guide.md", "the guide");
    std::fs::create_dir_all(project.path().join("work")).unwrap();
    let read = project
        .run(&["call", "read_file", "--path", "docs/guide.md"], "")
        .expect(0)
        .json();
    assert_eq!(read["content"], "the guide", "{read}");

    project.write(".toolgate/tools/echo.md", ECHO);
    let found = project
        .run(&["search", "repeat some text", "--json"], "")
        .expect(0)
        .json();
    assert_eq!(found[0]["name"], "echo_text", "{found}");

    for command in [
        vec!["--help"],
        vec!["call", "--help"],
        vec!["tools", "list", "--help"],
        vec!["serve", "mcp", "--help"],
        vec!["approvals", "--help"],
        vec!["audit", "tail", "--help"],
    ] {
        let help = project.run(&command, "").expect(0).stdout();
        assert!(help.contains("Usage: toolgate"), "{command:?}: {help}");
    }
    let exit_codes = project.run(&["--help"], "").expect(0).stdout();
    assert!(
        exit_codes.contains("3 the call needs approval and was not approved"),
        "{exit_codes}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn search_and_skills_are_enabled_from_the_config() {
    use axum::routing::get;
    let app = axum::Router::new().route(
        "/search",
        get(|| async { axum::Json(serde_json::json!({"results": [{"url": "https://example.org", "title": "Example", "content": "An <b>example</b>."}]})) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let project = Project::new(&format!(
        "{BASE}\n[web]\nallow_networks = [\"127.0.0.0/8\"]\n\n[ready.search]\npermission = \"public\"\nsearxng = {{local = \"http://{address}\"}}\n\n[ready.skills]\npermission = \"staff\"\n"
    ));
    let found = tokio::task::block_in_place(|| {
        project.run(&["call", "web_search", "--query", "example"], "")
    })
    .expect(0)
    .json();
    assert_eq!(
        found["results"][0],
        serde_json::json!({"title": "Example", "url": "https://example.org", "snippet": "An example."})
    );
    let skill = tokio::task::block_in_place(|| {
        project.run(
            &[
                "call",
                "create_skill",
                "--name",
                "tidy-up",
                "--title",
                "Tidy",
                "--description",
                "When asked to tidy.",
                "--content",
                "Sort the files.",
            ],
            "y\n",
        )
    })
    .expect(0)
    .json();
    assert_eq!(skill["path"], "skills/tidy-up/SKILL.md");
    assert!(project.path().join("work/skills/tidy-up/SKILL.md").exists());
    let no_backend = Project::new(&format!(
        "{BASE}\n[ready.search]\npermission = \"public\"\n"
    ));
    let refused = no_backend.run(&["tools", "list"], "").expect(2);
    assert!(
        refused.stderr().contains("names no backend"),
        "{}",
        refused.stderr()
    );
}
