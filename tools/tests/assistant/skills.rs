//! `create_skill`: a kebab-case name, a front matter that parses back, never overwriting.

use serde_json::json;
use toolgate_tools::files::Sandbox;
use toolgate_tools::skills::{SkillsConfig, create_skill_tool};

use crate::{Tools, code};

#[tokio::test]
async fn a_skill_is_written_once_where_it_says() {
    let root = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(root.path()).unwrap();
    let tools = Tools::new(vec![create_skill_tool().permission("user")], |builder| {
        builder.state(sandbox).state(SkillsConfig::default())
    });
    let skill = json!({
        "name": "release-notes", "title": "Release notes", "description": "When asked to write release notes: \"what changed\".",
        "content": "1. Read the changelog.\n2. Group by area.", "requires": ["read_file"], "auto_invoke": true,
    });
    let made = tools.call("create_skill", skill.clone()).await.unwrap();
    assert_eq!(made["path"], "skills/release-notes/SKILL.md");
    assert!(made["how_to_use"].as_str().unwrap().contains("read_file"));
    let text = std::fs::read_to_string(root.path().join("skills/release-notes/SKILL.md")).unwrap();
    assert!(
        text.starts_with("---\nname: \"release-notes\"\ntitle: \"Release notes\"\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "description: \"When asked to write release notes: \\\"what changed\\\".\"\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "requires: [\"read_file\"]\nauto_invoke: true\n---\n\n1. Read the changelog."
        ),
        "{text}"
    );

    let again = tools.call("create_skill", skill.clone()).await.unwrap_err();
    assert_eq!(again.code.as_str(), "already_exists");
    for name in ["Release", "../escape", "a--b", "-a", "a b"] {
        let mut bad = skill.clone();
        bad["name"] = json!(name);
        assert_eq!(
            code(tools.call("create_skill", bad).await),
            "invalid_arguments",
            "{name}"
        );
    }
    assert!(!root.path().parent().unwrap().join("escape").exists());
}
