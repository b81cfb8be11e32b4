//! `toolgate mcp list|call` against the MCP reference server (server-everything, started
//! over stdio) and against `toolgate serve mcp --http` (by URL, with a bearer token).

use std::path::Path;

use crate::support::{BASE, Project, Serving};

fn everything() -> String {
    let suite =
        toolgate_test_support::ConformanceSuite::installed(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let (node, script) = suite.server_everything();
    format!("{} {} stdio", node.display(), script.display())
}

#[test]
fn any_server_is_listed_and_called_from_the_shell() {
    let project = Project::new(BASE);
    let target = everything();
    let listed = project.run(&["mcp", "list", &target], "").expect(0);
    assert!(listed.stdout().contains("echo"), "{}", listed.stdout());
    assert!(listed.stdout().contains("get-sum"), "{}", listed.stdout());
    let echoed = project
        .run(
            &["mcp", "call", &target, "echo", "--message", "hello there"],
            "",
        )
        .expect(0);
    assert!(
        echoed.stdout().contains("hello there"),
        "{}",
        echoed.stdout()
    );
    // Typed by the schema: numbers are numbers.
    let sum = project
        .run(
            &["mcp", "call", &target, "get-sum", "--a", "2", "--b", "40"],
            "",
        )
        .expect(0);
    assert!(sum.stdout().contains("42"), "{}", sum.stdout());
    // Checked before it is sent: the server's schema wants numbers, and a whole object.
    let wrong = project
        .run(
            &["mcp", "call", &target, "get-sum", "--a", "two", "--b", "1"],
            "",
        )
        .expect(2);
    assert!(
        wrong.stderr().contains("--a takes a number, not `two`"),
        "{}",
        wrong.stderr()
    );
    let partial = project
        .run(
            &["mcp", "call", &target, "get-sum", "--json", r#"{"a": 1}"#],
            "",
        )
        .expect(2);
    assert!(
        partial.stderr().contains("invalid_arguments"),
        "{}",
        partial.stderr()
    );
    let unknown = project.run(&["mcp", "call", &target, "nope"], "").expect(4);
    assert!(
        unknown.stderr().contains("the server has no tool `nope`"),
        "{}",
        unknown.stderr()
    );
    let gone = project
        .run(&["mcp", "list", "/no/such/server"], "")
        .expect(1);
    assert!(
        gone.stderr().contains("the MCP server did not answer"),
        "{}",
        gone.stderr()
    );
}

#[test]
fn a_server_by_url_with_a_token() {
    let config = format!("{BASE}\n[callers.ann]\nrole = \"admin\"\ntoken_env = \"ANN_TOKEN\"\n");
    let project = Project::new(&config);
    project.write(
        ".toolgate/tools/shout.md",
        "---\nname: shout\ndescription: Shout a word.\npermission: public\nparameters: {word: string}\ncommand: {program: cat, output: json}\n---\n",
    );
    let server = Serving::start(
        &project,
        &["mcp", "--http", "127.0.0.1:0"],
        &[("ANN_TOKEN", "ann-token")],
    );
    let with_token = |args: &[&str]| {
        let mut command = project.command();
        command.args(args).env("ANN_TOKEN", "ann-token");
        project.run_with(&mut command, "")
    };
    let listed = with_token(&[
        "mcp",
        "list",
        &server.url,
        "--token-env",
        "ANN_TOKEN",
        "--json",
    ])
    .expect(0);
    assert_eq!(listed.json()[0]["name"], "shout");
    let called = with_token(&[
        "mcp",
        "call",
        &server.url,
        "shout",
        "--token-env",
        "ANN_TOKEN",
        "--word",
        "hey",
    ])
    .expect(0);
    assert!(called.stdout().contains("hey"), "{}", called.stdout());
    let refused = project.run(&["mcp", "list", &server.url], "").expect(1);
    assert!(
        refused.stderr().contains("did not answer"),
        "{}",
        refused.stderr()
    );
}
