//! Command tools: JSON on stdin, the result on stdout, failures with stderr's tail, the
//! sandbox as working folder, a scrubbed environment, a timeout that stops the program.

use crate::support::{BASE, Project};

const ECHO_TOOL: &str = r#"---
name: inspect
description: Report what the program was given.
permission: public
parameters:
  text: {type: string, description: Any text.}
  count: {type: integer, default: 1, minimum: 1}
  tags: {type: array, items: string, required: false}
  loud: {type: boolean, required: false}
command:
  program: ./scripts/inspect.sh
  output: json
  env: {GREETING: "${INSPECT_GREETING}"}
---
Prints the arguments it read on stdin, its working folder and two variables.
"#;

const ECHO_SCRIPT: &str = r#"#!/bin/sh
read -r arguments
printf '{"arguments": %s, "folder": "%s", "greeting": "%s", "leaked": "%s"}\n' "$arguments" "$(pwd)" "$GREETING" "$LEAKED_SECRET"
"#;

#[test]
fn arguments_arrive_as_json_on_stdin_typed_from_the_schema() {
    let project = Project::new(BASE);
    project.write(".toolgate/tools/inspect.md", ECHO_TOOL);
    project.script(".toolgate/tools/scripts/inspect.sh", ECHO_SCRIPT);
    let ran = project
        .run_with(
            project
                .command()
                .args([
                    "call",
                    "inspect",
                    "--text",
                    "a b; $(rm -rf /)",
                    "--count",
                    "3",
                    "--tags",
                    "x",
                    "--tags",
                    "y",
                    "--loud",
                ])
                .env("INSPECT_GREETING", "hello")
                .env("LEAKED_SECRET", "must-not-pass"),
            "",
        )
        .expect(0);
    let result = ran.json();
    assert_eq!(
        result["arguments"],
        serde_json::json!({"text": "a b; $(rm -rf /)", "count": 3, "tags": ["x", "y"], "loud": true})
    );
    let work = project.path().join("work").canonicalize().unwrap();
    assert_eq!(
        result["folder"],
        work.display().to_string(),
        "it runs in the sandbox"
    );
    assert_eq!(
        result["greeting"], "hello",
        "${{NAME}} passes a variable the file names"
    );
    assert_eq!(
        result["leaked"], "",
        "the rest of the environment is scrubbed"
    );
}

#[test]
fn a_wrong_argument_is_refused_before_the_program_runs() {
    let project = Project::new(BASE);
    project.write(".toolgate/tools/inspect.md", ECHO_TOOL);
    project.script(
        ".toolgate/tools/scripts/inspect.sh",
        "#!/bin/sh\ntouch ran\n",
    );
    let typed = project
        .run(&["call", "inspect", "--text", "x", "--count", "many"], "")
        .expect(2);
    assert!(
        typed
            .stderr()
            .contains("--count takes a whole number, not `many`"),
        "{}",
        typed.stderr()
    );
    let schema = project
        .run(
            &["call", "inspect", "--json", r#"{"text": "x", "count": 0}"#],
            "",
        )
        .expect(1);
    assert!(
        schema.stderr().contains("invalid_arguments"),
        "{}",
        schema.stderr()
    );
    let unknown = project
        .run(&["call", "inspect", "--text", "x", "--colour", "red"], "")
        .expect(2);
    assert!(
        unknown.stderr().contains("has no parameter `colour`"),
        "{}",
        unknown.stderr()
    );
    assert!(
        !project.path().join("work/ran").exists(),
        "the program never ran"
    );
}

#[test]
fn a_failing_program_reports_its_exit_code_and_the_tail_of_stderr() {
    let project = Project::new(BASE);
    project.write(
        ".toolgate/tools/fail.toml",
        "name = \"fail\"\ndescription = \"Always fails.\"\npermission = \"public\"\n[command]\nprogram = \"./scripts/fail.sh\"\n",
    );
    project.script(
        ".toolgate/tools/scripts/fail.sh",
        "#!/bin/sh\ni=0\nwhile [ $i -lt 500 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done\necho 'the real reason: disk full' >&2\nexit 3\n",
    );
    let ran = project
        .run(&["call", "fail", "--output", "json"], "")
        .expect(1);
    let outcome = ran.json();
    assert_eq!(outcome["ok"], false);
    let error = &outcome["error"];
    assert_eq!(error["code"], "execution_failed", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("`fail` exited with code 3:"),
        "{message}"
    );
    assert!(message.ends_with("the real reason: disk full"), "{message}");
    assert!(
        message.len() < 2200,
        "only the tail is kept: {} bytes",
        message.len()
    );
    assert_eq!(error["details"]["exit_code"], 3);
}

#[test]
fn a_program_past_its_timeout_is_stopped() {
    let project = Project::new(BASE);
    project.write(
        ".toolgate/tools/hang.md",
        "---\nname: hang\ndescription: Never ends.\npermission: public\ntimeout: 500ms\ncommand: {program: ./scripts/hang.sh}\n---\n",
    );
    project.script(
        ".toolgate/tools/scripts/hang.sh",
        "#!/bin/sh\necho $$ > pid\nexec sleep 60\n",
    );
    let started = std::time::Instant::now();
    let ran = project.run(&["call", "hang"], "").expect(1);
    assert!(ran.stderr().contains("timeout"), "{}", ran.stderr());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "it did not wait for the program"
    );
    let pid = std::fs::read_to_string(project.path().join("work/pid")).unwrap();
    let alive = std::path::Path::new(&format!("/proc/{}", pid.trim())).exists();
    assert!(!alive, "the program was killed");
}
