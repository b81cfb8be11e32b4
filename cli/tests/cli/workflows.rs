//! A workflow in a tool file: steps calling the project's other tools, run by
//! `toolgate call` as the caller, checked when the file loads (its step's line named).

use crate::support::{BASE, Project};

const LIST: &str = "---\nname: list_news\ndescription: News on a topic.\npermission: public\nread_only: true\nparameters: {topic: string}\ncommand: {program: ./scripts/news.sh, output: json}\n---\n";
const NEWS: &str = "#!/bin/sh\nread -r args\necho '{\"results\": [{\"title\": \"first\"}, {\"title\": \"second\"}]}'\n";
const TASK: &str = "---\nname: add_task\ndescription: Add a task.\npermission: public\nparameters: {title: string}\ncommand: {program: ./scripts/task.sh, output: json}\n---\n";
const TASK_SCRIPT: &str =
    "#!/bin/sh\nread -r args\necho \"$args\" >> tasks.log\necho '{\"added\": true}'\n";

const WORKFLOW: &str = r#"---
name: news_to_tasks
description: A task for each news item on a topic.
permission: public
parameters: {topic: string}
workflow:
  steps:
    - id: news
      tool: list_news
      arguments: {topic: "${params.topic}"}
    - id: tasks
      tool: add_task
      for_each: "${steps.news.results}"
      arguments: {title: "Read: ${item.title}"}
---
"#;

fn project() -> Project {
    let project = Project::new(BASE);
    project.write(".toolgate/tools/list_news.md", LIST);
    project.script(".toolgate/tools/scripts/news.sh", NEWS);
    project.write(".toolgate/tools/add_task.md", TASK);
    project.script(".toolgate/tools/scripts/task.sh", TASK_SCRIPT);
    project
}

#[test]
fn a_workflow_file_runs_its_steps_through_the_registry() {
    let project = project();
    // Named before the tools it calls: loaded after them all the same.
    project.write(".toolgate/tools/a_news_to_tasks.md", WORKFLOW);
    let ran = project
        .run(&["call", "news_to_tasks", "--topic", "AI"], "")
        .expect(0)
        .json();
    assert_eq!(ran["output"].as_array().unwrap().len(), 2, "{ran}");
    let log = std::fs::read_to_string(project.path().join("work/tasks.log")).unwrap();
    assert_eq!(
        log,
        "{\"title\":\"Read: first\"}\n{\"title\":\"Read: second\"}\n"
    );
    let listed = project
        .run(&["tools", "info", "news_to_tasks", "--json"], "")
        .expect(0)
        .json();
    assert_eq!(
        listed["input_schema"]["required"],
        serde_json::json!(["topic"])
    );
}

#[test]
fn a_broken_workflow_file_is_named_with_its_steps_line() {
    let project = project();
    let broken = WORKFLOW
        .replace("tool: add_task", "tool: add_tsk")
        .replace("${item.title}", "${item.title} ${steps.later}");
    project.write(".toolgate/tools/news_to_tasks.md", &broken);
    let checked = project.run(&["tools", "validate"], "");
    let said = format!("{}{}", checked.stdout(), checked.stderr());
    assert!(said.contains("news_to_tasks.md:11"), "{said}");
    assert!(
        said.contains("step `tasks`: calls `add_tsk`, which is no tool of the registry"),
        "{said}"
    );
    assert!(
        said.contains("reads step `later`, and there is no such step"),
        "{said}"
    );
}
