//! `toolgate install <client>`: toolgate's entry merged into each client's config file
//! where the client keeps it, what was there kept; the entry, started as a client would
//! start it (the official Python SDK over stdio), serves the config's tools.

use serde_json::{Value, json};

use crate::support::{BASE, Project, python_script};

fn project() -> Project {
    let project = Project::new(BASE);
    project.write(
        ".toolgate/tools/hello.md",
        "---\nname: hello\ndescription: Say hello.\npermission: public\ncommand: {program: echo, args: [hello], output: text}\n---\n",
    );
    project
}

fn read(project: &Project, relative: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(project.path().join(relative)).unwrap()).unwrap()
}

#[test]
fn each_client_gets_the_entry_where_it_keeps_its_servers() {
    let project = project();
    let home = tempfile::tempdir().unwrap();
    let install = |args: &[&str]| {
        let mut command = project.command();
        command
            .arg("install")
            .args(args)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"));
        project.run_with(&mut command, "")
    };
    // What the project's Cursor config already holds stays.
    project.write(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}"#,
    );
    install(&["cursor"]).expect(0);
    let cursor = read(&project, ".cursor/mcp.json");
    assert_eq!(cursor["theme"], "dark");
    assert_eq!(cursor["mcpServers"]["other"]["command"], "other-server");
    let entry = &cursor["mcpServers"]["toolgate"];
    assert!(
        entry["command"].as_str().unwrap().ends_with("toolgate"),
        "{entry}"
    );
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[2..], ["serve", "mcp", "--stdio"]);
    assert!(
        args[1].ends_with("toolgate.toml") && args[1].starts_with('/'),
        "{args:?}"
    );

    install(&["claude-code"]).expect(0);
    assert_eq!(
        read(&project, ".mcp.json")["mcpServers"]["toolgate"]["type"],
        "stdio"
    );
    install(&["vscode", "--name", "tools", "--as", "ann"]).expect(0);
    let vscode = read(&project, ".vscode/mcp.json");
    assert_eq!(vscode["servers"]["tools"]["type"], "stdio");
    assert_eq!(
        vscode["servers"]["tools"]["args"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        "ann"
    );
    let desktop = install(&["claude-desktop"]).expect(0);
    let desktop_file = home
        .path()
        .join(".config/Claude/claude_desktop_config.json");
    assert!(
        desktop.stdout().contains("added `toolgate`"),
        "{}",
        desktop.stdout()
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&desktop_file).unwrap()).unwrap();
    assert!(written["mcpServers"]["toolgate"]["command"].is_string());
    let again = install(&["claude-desktop"]).expect(0);
    assert!(
        again.stdout().contains("replaced `toolgate`"),
        "{}",
        again.stdout()
    );
    install(&["cursor", "--user"]).expect(0);
    assert!(home.path().join(".cursor/mcp.json").exists());

    // --print writes nothing.
    let printed = install(&["claude-code", "--print", "--file", "elsewhere.json"]).expect(0);
    assert!(
        printed.stdout().contains("\"mcpServers\""),
        "{}",
        printed.stdout()
    );
    assert!(!project.path().join("elsewhere.json").exists());

    // A file that is not JSON is left alone, its line said.
    project.write(".vscode/mcp.json", "{\n  \"servers\": {,\n}\n");
    let broken = install(&["vscode"]).expect(1);
    assert!(
        broken.stderr().contains(".vscode/mcp.json:2: not JSON"),
        "{}",
        broken.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join(".vscode/mcp.json")).unwrap(),
        "{\n  \"servers\": {,\n}\n"
    );

    // The entry works: started as the client starts it, it serves the config's tools.
    let entry = &read(&project, ".mcp.json")["mcpServers"]["toolgate"];
    let mut started = vec![
        "stdio".to_owned(),
        entry["command"].as_str().unwrap().to_owned(),
    ];
    started.extend(
        entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned()),
    );
    let started: Vec<&str> = started.iter().map(String::as_str).collect();
    assert_eq!(
        python_script("list_tools.py", &started),
        json!({"tools": ["hello"], "hello": "hello\n"})
    );
}
