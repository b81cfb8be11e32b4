//! Watching tool folders while the tools serve: a dropped-in file that reuses a working
//! tool's name never takes it over, whatever its file name sorts as; it is refused with a
//! problem naming both places, and the working tool keeps serving.

use std::path::Path;
use std::time::Duration;

use toolgate::{Caller, Registry, ToolCall};
use toolgate_tools::file_tools::FileTools;

fn tool_file(name: &str, says: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Says {says}.\npermission: public\ncommand: {{program: echo, args: [\"{says}\"]}}\n---\n"
    )
}

async fn says(registry: &Registry, name: &str) -> String {
    let outcome = registry
        .call(&Caller::new("u", "public"), ToolCall::new("1", name, "{}"))
        .await;
    outcome
        .result
        .map(|value| value.to_string())
        .unwrap_or_else(|error| error.code.to_string())
}

/// Waits until `done` holds, for the watcher's quiet time and a reading of the folder.
async fn eventually(mut done: impl FnMut() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the folder was not read again in 5 s");
}

fn write(folder: &Path, file: &str, text: &str) {
    std::fs::write(folder.join(file), text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_file_never_takes_over_a_working_tools_name() {
    let folder = tempfile::tempdir().unwrap();
    let sandbox = tempfile::tempdir().unwrap();
    write(
        folder.path(),
        "m_greet.md",
        &tool_file("greet", "the-original"),
    );
    let mut tools = FileTools::new(vec![folder.path().to_path_buf()]);
    tools.sandbox = Some(std::sync::Arc::new(
        toolgate_tools::files::Sandbox::new(sandbox.path()).unwrap(),
    ));
    let registry = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .build()
        .unwrap();
    let registered = tools.register(&registry);
    assert!(registered.problems.is_empty(), "{:?}", registered.problems);
    let watching = tools
        .watch(registry.clone(), registered, Duration::from_millis(100))
        .unwrap();
    assert!(says(&registry, "greet").await.contains("the-original"));

    // Sorting before and after the working file: neither takes the name.
    for dropped in ["a_impostor.md", "z_impostor.md"] {
        write(folder.path(), dropped, &tool_file("greet", "the-impostor"));
        eventually(|| !watching.problems().is_empty()).await;
        let problems = watching.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        let problem = problems[0].to_string();
        assert!(problem.contains(dropped), "{problem}");
        assert!(
            problem.contains("m_greet.md"),
            "names the working file: {problem}"
        );
        assert!(says(&registry, "greet").await.contains("the-original"));
        std::fs::remove_file(folder.path().join(dropped)).unwrap();
        eventually(|| watching.problems().is_empty()).await;
        assert!(says(&registry, "greet").await.contains("the-original"));
    }

    // The working file itself may change, and a new tool of another name comes in.
    write(folder.path(), "m_greet.md", &tool_file("greet", "the-edit"));
    write(folder.path(), "n_wave.md", &tool_file("wave", "hello"));
    eventually(|| edited_and_added(&registry)).await;
    assert!(says(&registry, "greet").await.contains("the-edit"));
    assert!(watching.problems().is_empty());
}

fn edited_and_added(registry: &Registry) -> bool {
    let caller = Caller::new("u", "public");
    registry.definition(&caller, "wave").is_some()
        && registry
            .definition(&caller, "greet")
            .is_some_and(|definition| definition.description.contains("the-edit"))
}
