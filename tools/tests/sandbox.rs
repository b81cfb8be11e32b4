//! The file tools inside a sandbox: normal use works, and every way out is refused.

mod common;

use common::Fixture;

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate_tools::files::{self, FileLimits, Sandbox};

fn fixture() -> Fixture {
    let root = TempDir::new().unwrap();
    let outside = TempDir::new().unwrap();
    fs::write(outside.path().join("secret.txt"), "top secret").unwrap();
    fs::create_dir(root.path().join("docs")).unwrap();
    fs::write(root.path().join("docs/readme.md"), "# Hello\n").unwrap();
    fs::write(root.path().join("docs/.hidden"), "h").unwrap();
    fs::write(root.path().join("notes.txt"), "buy milk").unwrap();
    fs::write(root.path().join("image.bin"), [0u8, 159, 146, 150, 1, 2]).unwrap();
    // Symlinks pointing out of the sandbox, absolute and relative.
    symlink(
        outside.path().join("secret.txt"),
        root.path().join("link_to_secret"),
    )
    .unwrap();
    symlink(outside.path(), root.path().join("link_to_outside")).unwrap();
    symlink("../../../../../../etc", root.path().join("docs/etc")).unwrap();
    // A symlink that stays inside is fine.
    symlink("notes.txt", root.path().join("inside_link")).unwrap();
    let sandbox = Sandbox::new(root.path()).unwrap().with_limits(FileLimits {
        max_read_bytes: 64,
        max_write_bytes: 1024,
        max_entries: 50,
    });
    Fixture::new(sandbox, root, outside)
}

impl Fixture {
    fn outside_untouched(&self) {
        assert_eq!(
            fs::read_to_string(self.outside.path().join("secret.txt")).unwrap(),
            "top secret"
        );
        assert_eq!(
            fs::read_dir(self.outside.path()).unwrap().count(),
            1,
            "nothing was created outside"
        );
    }
}

fn code(result: &Result<Value, ToolError>) -> String {
    match result {
        Ok(value) => format!("ok: {value}"),
        Err(error) => error.code.to_string(),
    }
}

#[tokio::test]
async fn normal_use_works() {
    let f = fixture();
    let read = f
        .call("read_file", json!({"path": "docs/readme.md"}))
        .await
        .unwrap();
    assert_eq!(read["content"], "# Hello\n");
    assert_eq!(
        f.call("read_file", json!({"path": "./notes.txt"}))
            .await
            .unwrap()["content"],
        "buy milk"
    );
    assert_eq!(
        f.call("read_file", json!({"path": "inside_link"}))
            .await
            .unwrap()["content"],
        "buy milk"
    );
    let binary = f
        .call("read_file", json!({"path": "image.bin"}))
        .await
        .unwrap();
    assert_eq!(
        (
            binary["binary"].clone(),
            binary["size"].clone(),
            binary["content"].clone()
        ),
        (json!(true), json!(6), Value::Null)
    );

    f.call(
        "write_file",
        json!({"path": "out/new.txt", "content": "hi", "create_parents": true}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read_to_string(f.root.path().join("out/new.txt")).unwrap(),
        "hi"
    );
    let missing_parent = f
        .call(
            "write_file",
            json!({"path": "nope/new.txt", "content": "hi"}),
        )
        .await;
    assert_eq!(code(&missing_parent), "not_found");

    let listing = f
        .call("list_directory", json!({"path": "docs"}))
        .await
        .unwrap();
    let names: Vec<&str> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["etc", "readme.md"]);
    let hidden = f
        .call(
            "list_directory",
            json!({"path": "docs", "include_hidden": true}),
        )
        .await
        .unwrap();
    assert_eq!(hidden["entries"].as_array().unwrap().len(), 3);
    assert_eq!(hidden["entries"][1]["kind"], "symlink");

    let found = f
        .call("search_files", json!({"pattern": "**/*.md"}))
        .await
        .unwrap();
    assert_eq!(found["matches"][0]["path"], "docs/readme.md");
    assert_eq!(found["matches"][0]["size"], 8);
    assert!(found["matches"][0]["modified"].as_u64().unwrap() > 1_600_000_000);

    f.call("create_directory", json!({"path": "a/b/c"}))
        .await
        .unwrap();
    assert_eq!(
        code(&f.call("create_directory", json!({"path": "a/b"})).await),
        "already_exists"
    );
    f.call(
        "move_path",
        json!({"from": "notes.txt", "to": "a/notes.txt"}),
    )
    .await
    .unwrap();
    assert!(f.root.path().join("a/notes.txt").exists());
    assert_eq!(
        code(
            &f.call(
                "move_path",
                json!({"from": "docs/readme.md", "to": "a/notes.txt"})
            )
            .await
        ),
        "already_exists"
    );
    assert_eq!(
        code(&f.call("delete_directory", json!({"path": "a"})).await),
        "not_empty"
    );
    assert_eq!(
        code(
            &f.call("delete_directory", json!({"path": "a/notes.txt"}))
                .await
        ),
        "not_a_directory"
    );
    f.call("delete_directory", json!({"path": "a", "recursive": true}))
        .await
        .unwrap();
    assert!(!f.root.path().join("a").exists());
    f.outside_untouched();
}

#[tokio::test]
async fn limits_and_error_codes() {
    let f = fixture();
    fs::write(f.root.path().join("big.txt"), "x".repeat(100)).unwrap();
    let big = f.call("read_file", json!({"path": "big.txt"})).await;
    assert_eq!(code(&big), "too_large");
    assert!(big.unwrap_err().message.contains("pass `max_bytes`"));
    let head = f
        .call("read_file", json!({"path": "big.txt", "max_bytes": 10}))
        .await
        .unwrap();
    assert_eq!(
        (
            head["content"].as_str().unwrap().len(),
            head["truncated"].clone()
        ),
        (10, json!(true))
    );
    assert_eq!(
        code(&f.call("read_file", json!({"path": "nothing.txt"})).await),
        "not_found"
    );
    assert_eq!(
        code(&f.call("read_file", json!({"path": "docs"})).await),
        "is_a_directory"
    );
    assert_eq!(
        code(&f.call("list_directory", json!({"path": "notes.txt"})).await),
        "not_a_directory"
    );
    let too_much = f
        .call(
            "write_file",
            json!({"path": "w.txt", "content": "x".repeat(2000)}),
        )
        .await;
    assert_eq!(code(&too_much), "too_large");
    for n in 0..60 {
        fs::write(f.root.path().join(format!("many-{n}.txt")), "").unwrap();
    }
    let listing = f.call("list_directory", json!({})).await.unwrap();
    assert_eq!(
        (
            listing["entries"].as_array().unwrap().len(),
            listing["truncated"].clone()
        ),
        (50, json!(true))
    );
    let found = f
        .call(
            "search_files",
            json!({"pattern": "many-*", "max_results": 5}),
        )
        .await
        .unwrap();
    assert_eq!(found["matches"].as_array().unwrap().len(), 5);
    let bad_glob = f.call("search_files", json!({"pattern": "a[b"})).await;
    assert_eq!(code(&bad_glob), "invalid_arguments");
}

/// Paths that must never reach anything outside the sandbox.
const ESCAPES: &[&str] = &[
    "..",
    "../",
    "../secret.txt",
    "../../../../etc/passwd",
    "docs/../../secret.txt",
    "docs/../../../etc/passwd",
    "./../secret.txt",
    "docs/./../..",
    "a/b/../../../x",
    "/etc/passwd",
    "/",
    "//etc/passwd",
    "~/secret.txt",
    "~",
    "C:\\Windows\\System32",
    "C:/Windows/System32",
    "c:",
    "..\\secret.txt",
    "docs\\..\\..\\secret.txt",
    "\\\\server\\share\\file",
    "notes.txt\0.png",
    "\0",
    "docs/\u{0007}bell",
    "line\nbreak",
    "\u{2024}\u{2024}/secret.txt",
    "\u{FF0E}\u{FF0E}/secret.txt",
    "docs\u{2215}..\u{2215}..\u{2215}secret.txt",
    "docs\u{FF0F}..\u{FF0F}secret.txt",
    "\u{FE52}\u{FE52}/secret.txt",
    "..\u{2044}secret.txt",
    "link_to_secret",
    "link_to_outside/secret.txt",
    "link_to_outside",
    "docs/etc/passwd",
    "docs/etc",
];

#[tokio::test]
async fn every_escape_is_refused_by_every_tool() {
    let f = fixture();
    assert!(ESCAPES.len() >= 30);
    for path in ESCAPES {
        let attempts = [
            ("read_file", json!({"path": path})),
            (
                "write_file",
                json!({"path": format!("{path}/x"), "content": "pwned", "create_parents": true}),
            ),
            ("write_file", json!({"path": path, "content": "pwned"})),
            ("list_directory", json!({"path": path})),
            ("search_files", json!({"pattern": "*", "path": path})),
            ("create_directory", json!({"path": format!("{path}/made")})),
            ("delete_directory", json!({"path": path, "recursive": true})),
            ("move_path", json!({"from": "notes.txt", "to": path})),
            ("move_path", json!({"from": path, "to": "stolen.txt"})),
        ];
        for (tool, arguments) in attempts {
            let result = f.call(tool, arguments.clone()).await;
            let error = match &result {
                Ok(value) => panic!("{tool} {arguments} was allowed: {value}"),
                Err(error) => error,
            };
            let code = error.code.as_str();
            assert!(
                matches!(
                    code,
                    "path_not_allowed" | "not_found" | "not_a_directory" | "already_exists"
                ),
                "{tool} {path:?}: unexpected {code}: {}",
                error.message
            );
        }
    }
    f.outside_untouched();
    assert!(!f.root.path().join("stolen.txt").exists());
}

#[tokio::test]
async fn the_common_escapes_say_why() {
    let f = fixture();
    for (path, why) in [
        ("../secret.txt", "`..` is not allowed"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("C:\\Windows", "Windows-style paths"),
        ("a\0b", "NUL byte"),
        ("\u{FF0E}\u{FF0E}/x", "looks like `.` or `/`"),
        ("link_to_secret", "leads outside the sandbox"),
    ] {
        let error = f
            .call("read_file", json!({"path": path}))
            .await
            .unwrap_err();
        assert_eq!(
            error.code.as_str(),
            "path_not_allowed",
            "{path:?}: {}",
            error.message
        );
        assert!(error.message.contains(why), "{path:?}: {}", error.message);
    }
}

#[tokio::test]
async fn a_symlink_swapped_in_after_the_check_is_still_refused() {
    let f = fixture();
    // The path is checked as text, then an attacker replaces the folder by a link out.
    fs::create_dir(f.root.path().join("swap")).unwrap();
    fs::write(f.root.path().join("swap/file.txt"), "inside").unwrap();
    assert_eq!(
        f.call("read_file", json!({"path": "swap/file.txt"}))
            .await
            .unwrap()["content"],
        "inside"
    );
    fs::remove_dir_all(f.root.path().join("swap")).unwrap();
    symlink(f.outside.path(), f.root.path().join("swap")).unwrap();
    fs::write(f.outside.path().join("file.txt"), "outside").unwrap();
    let error = f
        .call("read_file", json!({"path": "swap/file.txt"}))
        .await
        .unwrap_err();
    assert_eq!(error.code.as_str(), "path_not_allowed");
}

#[tokio::test]
async fn several_roots_are_addressed_by_name() {
    let first = TempDir::new().unwrap();
    let second = TempDir::new().unwrap();
    fs::write(second.path().join("shared.txt"), "shared").unwrap();
    let sandbox = Sandbox::new(first.path())
        .unwrap()
        .with_root("shared", second.path())
        .unwrap();
    let root_name = first
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let registry = Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .policy_mode(PolicyMode::Auto)
        .state(sandbox)
        .tool(files::read_file_tool().permission("user"))
        .tool(files::write_file_tool().permission("user"))
        .build()
        .unwrap();
    let user = Caller::new("u", "user");
    let call =
        |tool: &str, arguments: Value| registry.call(&user, ToolCall::new("1", tool, arguments));
    assert_eq!(
        call("read_file", json!({"path": "shared/shared.txt"}))
            .await
            .result
            .unwrap()["content"],
        "shared"
    );
    call(
        "write_file",
        json!({"path": format!("{root_name}/a.txt"), "content": "a"}),
    )
    .await
    .result
    .unwrap();
    assert!(first.path().join("a.txt").exists());
    let error = call("read_file", json!({"path": "elsewhere/x"}))
        .await
        .result
        .unwrap_err();
    assert!(
        error.message.contains("is not an allowed folder"),
        "{}",
        error.message
    );
}
