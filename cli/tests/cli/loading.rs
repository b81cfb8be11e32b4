//! Discovery: good files load beside broken ones, each broken file is one problem with its
//! line, names taken by a ready tool or another file are refused with both places named;
//! listing by role; a starter file that works as written.

use crate::support::{BASE, Project};

const READY_FILES: &str = "\n[ready.files]\npermission = \"staff\"\n";

fn tool(name: &str, permission: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The tool {name}.\npermission: {permission}\ncommand: {{program: echo, args: [\"{name}\"]}}\n---\n"
    )
}

#[test]
fn broken_files_are_one_problem_each_and_the_rest_still_load() {
    let project = Project::new(&format!("{BASE}{READY_FILES}"));
    project.write(".toolgate/tools/a_good.md", &tool("good", "public"));
    project.write(
        ".toolgate/tools/b_yaml.md",
        "---\nname: yaml\ndescription: [unclosed\npermission: public\n---\n",
    );
    project.write(".toolgate/tools/c_unknown_key.toml", "name = \"unknown_key\"\ndescription = \"x\"\npermission = \"public\"\ncolour = \"red\"\n[command]\nprogram = \"echo\"\n");
    project.write(".toolgate/tools/d_role.md", &tool("bad_role", "staf"));
    project.write(".toolgate/tools/e_twin.md", &tool("good", "public"));
    project.write(".toolgate/tools/f_ready.md", &tool("read_file", "public"));
    project.write(
        ".toolgate/tools/g_no_runner.md",
        "---\nname: idle\ndescription: Does nothing.\npermission: public\n---\n",
    );
    project.write(".toolgate/tools/h_params.md", "---\nname: params\ndescription: x\npermission: public\nparameters:\n  q: {type: strng}\ncommand: {program: echo}\n---\n");
    project.write(".toolgate/tools/i_schema.md", "---\nname: schema\ndescription: x\npermission: public\nparameters:\n  type: object\n  properties: {a: {type: strin}}\ncommand: {program: echo}\n---\n");
    project.write(".toolgate/tools/j_ui.md", "---\nname: ui\ndescription: x\npermission: public\nui: pet card\ncommand: {program: echo}\n---\n");
    project.write(".toolgate/tools/k_card.md", "---\nname: card\ndescription: x\npermission: public\nui: pet_card\ncommand: {program: echo}\n---\n");
    project.write(".toolgate/tools/notes.txt", "not a tool file");

    let listed = project.run(&["tools", "list", "--json"], "").expect(0);
    let names: Vec<String> = listed
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        names.contains(&"good".to_owned()) && names.contains(&"read_file".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|name| [
            "yaml",
            "unknown_key",
            "bad_role",
            "idle",
            "params",
            "schema",
            "ui"
        ]
        .contains(&name.as_str())),
        "{names:?}"
    );

    let card = listed
        .json()
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "card")
        .cloned()
        .unwrap();
    assert_eq!(card["ui"], "pet_card", "{card}");

    let validated = project.run(&["tools", "validate"], "").expect(1);
    let out = validated.stdout();
    let problem = |file: &str| {
        out.lines()
            .find(|line| line.starts_with("problem") && line.contains(file))
            .unwrap_or_else(|| panic!("no problem for {file}:\n{out}"))
            .to_owned()
    };
    assert!(
        problem("b_yaml.md").contains("b_yaml.md:3:"),
        "{}",
        problem("b_yaml.md")
    );
    let unknown = problem("c_unknown_key.toml");
    assert!(
        unknown.contains("c_unknown_key.toml:4:") && unknown.contains("unknown field `colour`"),
        "{unknown}"
    );
    let role = problem("d_role.md");
    assert!(
        role.contains("d_role.md:4:")
            && role.contains("\"staf\"")
            && role.contains("\"public\", \"staff\", \"admin\""),
        "{role}"
    );
    let twin = problem("e_twin.md");
    assert!(
        twin.contains("e_twin.md:2:")
            && twin.contains("the name `good` is taken by the tool defined at")
            && twin.contains("a_good.md:2"),
        "{twin}"
    );
    let ready = problem("f_ready.md");
    assert!(
        ready.contains("taken by the tool defined at") && ready.contains("files/mod.rs"),
        "{ready}"
    );
    assert!(
        problem("g_no_runner.md")
            .contains("add `command` (a program), `http` (a request) or `workflow` (steps)")
    );
    let params = problem("h_params.md");
    assert!(
        params.contains("h_params.md:5:") && params.contains("type `strng` is not one of"),
        "{params}"
    );
    let ui = problem("j_ui.md");
    assert!(
        ui.contains("j_ui.md:5:") && ui.contains("names the component \"pet card\""),
        "{ui}"
    );
    assert!(
        out.lines()
            .any(|line| line.starts_with("ok") && line.contains("a_good.md")),
        "{out}"
    );
    assert!(!out.contains("notes.txt"));
    assert!(
        validated
            .stderr()
            .contains("9 of 11 tool files have problems"),
        "{}",
        validated.stderr()
    );

    // Serving and calling go on: the broken files are reported on stderr.
    let called = project.run(&["call", "good"], "").expect(0);
    assert_eq!(called.stdout().trim(), "good");
    assert!(
        called.stderr().contains("skipped tool file:"),
        "{}",
        called.stderr()
    );
}

#[test]
fn each_role_sees_and_calls_its_own_tools() {
    let project = Project::new(&format!(
        "{BASE}{READY_FILES}\n[callers.pat]\nrole = \"public\"\n"
    ));
    project.write(".toolgate/tools/hello.md", &tool("hello", "public"));
    project.write(".toolgate/tools/purge.md", &tool("purge", "admin"));
    let public = project
        .run(&["tools", "list", "--role", "public"], "")
        .expect(0)
        .stdout();
    assert_eq!(
        public
            .lines()
            .map(|line| line.split('\t').next().unwrap())
            .collect::<Vec<_>>(),
        ["hello"]
    );
    let staff = project
        .run(
            &[
                "tools", "list", "--role", "staff", "--group", "files", "--json",
            ],
            "",
        )
        .expect(0)
        .json();
    assert_eq!(staff.as_array().unwrap().len(), 7);
    let hidden = project.run(&["call", "purge", "--as", "pat"], "").expect(4);
    let unknown = project
        .run(&["call", "no_such_tool", "--as", "pat"], "")
        .expect(4);
    assert_eq!(
        hidden.stderr().replace("purge", "X"),
        unknown.stderr().replace("no_such_tool", "X"),
        "a hidden tool answers exactly like one that does not exist"
    );
    let info = project
        .run(&["tools", "info", "purge", "--json"], "")
        .expect(0)
        .json();
    assert_eq!(info["permission"], "admin");
    assert!(info["source"].as_str().unwrap().ends_with("purge.md:2"));
    let groups = project
        .run(&["tools", "groups", "--json"], "")
        .expect(0)
        .json();
    assert_eq!(groups["files"].as_array().unwrap().len(), 7);
    let permissions = project
        .run(&["tools", "permissions", "--json"], "")
        .expect(0)
        .json();
    assert_eq!(
        permissions["roles"][0]["tools"],
        serde_json::json!(["hello"])
    );
    assert_eq!(permissions["approver_role"], "admin");
}

#[test]
fn a_starter_file_works_as_written() {
    let project = Project::new(BASE);
    let made = project
        .run(&["tools", "new", "shout", "--kind", "command"], "")
        .expect(0);
    assert!(made.stdout().contains("shout.md"), "{}", made.stdout());
    project.run(&["tools", "validate"], "").expect(0);
    let called = project
        .run(&["call", "shout", "--text", "hi there"], "")
        .expect(0)
        .json();
    assert_eq!(called["you_sent"], serde_json::json!({"text": "hi there"}));
    project.run(&["tools", "new", "shout"], "").expect(2);
    project
        .run(&["tools", "new", "fetch_it", "--kind", "http"], "")
        .expect(0);
    let info = project
        .run(&["tools", "info", "fetch_it", "--json"], "")
        .expect(0)
        .json();
    assert_eq!(info["hints"]["open_world"], true);
    project.run(&["tools", "new", "bad name"], "").expect(2);
}

#[test]
fn the_user_folder_is_read_after_the_project_folder() {
    let project = Project::new(BASE);
    project.write(".toolgate/tools/mine.md", &tool("mine", "public"));
    let home = tempfile::tempdir().unwrap();
    let user_tools = home.path().join("toolgate/tools");
    std::fs::create_dir_all(&user_tools).unwrap();
    std::fs::write(user_tools.join("mine.md"), tool("mine", "public")).unwrap();
    std::fs::write(user_tools.join("theirs.md"), tool("theirs", "public")).unwrap();
    let ran = project
        .run_with(
            project
                .command()
                .args(["tools", "list"])
                .env("XDG_CONFIG_HOME", home.path()),
            "",
        )
        .expect(0);
    let names: Vec<String> = ran
        .stdout()
        .lines()
        .map(|line| line.split('\t').next().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["mine", "theirs"]);
    assert!(
        ran.stderr()
            .contains("toolgate/tools/mine.md:2: the name `mine` is taken by the tool defined at"),
        "{}",
        ran.stderr()
    );
}
