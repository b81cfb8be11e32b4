//! A new user's first minutes, in an empty folder, with no other step: `init` then a call;
//! or `tools new` then a call; a second `init` refused; serving the result as written.

use crate::support::Project;

#[test]
fn init_then_a_call_works_in_an_empty_folder() {
    let project = Project::empty();
    let ran = project.run(&["init"], "").expect(0);
    for written in ["toolgate.toml", "workspace", ".toolgate/tools/greet.md"] {
        assert!(
            project.path().join(written).exists(),
            "{written} is missing"
        );
    }
    assert!(
        ran.stdout().contains("toolgate call greet --text hello"),
        "{}",
        ran.stdout()
    );
    let called = project
        .run(&["call", "greet", "--text", "hello"], "")
        .expect(0);
    assert_eq!(called.json()["you_sent"]["text"], "hello");
    // The starter is for everyone: the lowest role sees it.
    let listed = project
        .run(&["tools", "list", "--role", "public", "--json"], "")
        .expect(0);
    assert_eq!(listed.json()[0]["name"], "greet", "{}", listed.stdout());
    // The call is in the audit trail the config names, and the trail verifies.
    let verified = project.run(&["audit", "verify"], "").expect(0);
    assert!(
        verified.stdout().starts_with("ok: 1 records"),
        "{}",
        verified.stdout()
    );

    let again = project.run(&["init"], "").expect(2);
    assert!(
        again.stderr().contains("toolgate.toml` exists already"),
        "{}",
        again.stderr()
    );
}

#[test]
fn tools_new_then_a_call_works_in_an_empty_folder() {
    let project = Project::empty();
    let ran = project.run(&["tools", "new", "shout"], "").expect(0);
    assert!(
        ran.stdout().contains("no config was here"),
        "{}",
        ran.stdout()
    );
    let called = project
        .run(&["call", "shout", "--text", "hi"], "")
        .expect(0);
    assert_eq!(called.json()["you_sent"]["text"], "hi");
    // Said once: the config is there now.
    let second = project.run(&["tools", "new", "whisper"], "").expect(0);
    assert!(
        !second.stdout().contains("no config was here"),
        "{}",
        second.stdout()
    );
}

#[test]
fn tools_new_uses_the_configs_lowest_role() {
    let project = Project::new("roles = [\"guest\", \"owner\"]\n[sandbox]\nroot = \"work\"\n");
    project.run(&["tools", "new", "hello"], "").expect(0);
    let text = std::fs::read_to_string(project.tools().join("hello.md")).unwrap();
    assert!(text.contains("permission: guest"), "{text}");
    let called = project
        .run(&["call", "hello", "--text", "x", "--role", "guest"], "")
        .expect(0);
    assert_eq!(called.json()["you_sent"]["text"], "x");
}
