//! The sandbox's edges: moves that would re-aim a symlink, writes through hard links, files
//! made executable, look-alike and invisible characters, and honest destructive hints.

mod common;

use common::Fixture;

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};

use serde_json::json;
use tempfile::TempDir;
use toolgate_tools::files::{self, Sandbox};

fn fixture() -> Fixture {
    let root = TempDir::new().unwrap();
    let outside = TempDir::new().unwrap();
    fs::write(outside.path().join("victim.txt"), "original").unwrap();
    Fixture::new(Sandbox::new(root.path()).unwrap(), root, outside)
}

#[tokio::test]
async fn a_move_never_re_aims_a_symlink() {
    let f = fixture();
    let root = f.root.path();
    fs::create_dir_all(root.join("a/b")).unwrap();
    // Dangling where it is; from the top of the sandbox it would lead out.
    symlink("../../victim.txt", root.join("a/b/dangling")).unwrap();
    fs::create_dir_all(root.join("deep/er/folder")).unwrap();
    symlink("../../../../x", root.join("deep/er/folder/link")).unwrap();
    for (from, to) in [("a/b/dangling", "dangling"), ("deep", "moved")] {
        let refused = f
            .call("move_path", json!({"from": from, "to": to}))
            .await
            .unwrap_err();
        assert_eq!(
            refused.code.as_str(),
            "path_not_allowed",
            "{from}: {refused:?}"
        );
        assert!(refused.message.contains("link"), "{}", refused.message);
    }
    assert!(root.join("a/b/dangling").is_symlink(), "nothing moved");
    fs::write(root.join("plain.txt"), "x").unwrap();
    f.call(
        "move_path",
        json!({"from": "plain.txt", "to": "a/plain.txt"}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_write_replaces_a_hard_link_instead_of_writing_through_it() {
    let f = fixture();
    let victim = f.outside.path().join("victim.txt");
    let link = f.root.path().join("linked.txt");
    if fs::hard_link(&victim, &link).is_err() {
        eprintln!("the temporary folders are on different file systems; no hard link to test");
        return;
    }
    f.call(
        "write_file",
        json!({"path": "linked.txt", "content": "overwritten"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "original");
    assert_eq!(fs::read_to_string(&link).unwrap(), "overwritten");
}

#[tokio::test]
async fn nothing_the_file_tools_write_or_move_is_executable() {
    let f = fixture();
    let root = f.root.path();
    fs::write(root.join("script.sh"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(root.join("script.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    f.call(
        "write_file",
        json!({"path": "script.sh", "content": "#!/bin/sh\necho hi\n"}),
    )
    .await
    .unwrap();
    fs::create_dir_all(root.join("hooks")).unwrap();
    fs::write(root.join("hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(
        root.join("hooks/pre-commit.sample"),
        fs::Permissions::from_mode(0o4755),
    )
    .unwrap();
    fs::write(root.join("tool"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(root.join("tool"), fs::Permissions::from_mode(0o755)).unwrap();
    f.call("move_path", json!({"from": "hooks", "to": "moved-hooks"}))
        .await
        .unwrap();
    f.call("move_path", json!({"from": "tool", "to": "tool2"}))
        .await
        .unwrap();
    f.call(
        "write_file",
        json!({"path": "new.sh", "content": "x", "create_parents": true}),
    )
    .await
    .unwrap();
    for path in [
        "script.sh",
        "moved-hooks/pre-commit.sample",
        "tool2",
        "new.sh",
    ] {
        let mode = fs::metadata(root.join(path)).unwrap().permissions().mode();
        assert_eq!(mode & 0o7111, 0, "{path} has mode {mode:o}");
    }
}

#[tokio::test]
async fn look_alike_and_invisible_characters_are_refused() {
    let f = fixture();
    let paths = [
        "\u{27CB}etc",        // ⟋ mathematical rising diagonal
        "\u{A4F8}\u{A4F8}/x", // ꓸꓸ Lisu letter tone mya ti
        "\u{0701}\u{0701}/x", // ܁܁ Syriac supralinear full stop
        "..\u{200B}/x",       // dots and a zero-width space
        "a\u{202E}txt.exe",   // right-to-left override
        "a\u{2066}b",         // left-to-right isolate
        "\u{2024}\u{2024}/x", // one dot leader
        "\u{FF0E}\u{FF0E}/x", // fullwidth full stop
        "\u{3002}\u{3002}/x", // 。。 ideographic full stop
        "\u{FF61}\u{FF61}/x", // ｡｡ halfwidth ideographic full stop
        ".\u{3002}/x",        // a dot and an ideographic full stop
        "a/\u{06D4}\u{06D4}", // ۔۔ Arabic full stop
        "\u{0589}/x",         // ։ Armenian full stop
        "a\u{2215}b",         // division slash
        "x\u{00A0}y",         // no-break space
        "\u{3164}",           // Hangul filler
        "a\u{FEFF}b",         // byte order mark
        "a\u{E000}b",         // private use
    ];
    for path in paths {
        for (tool, arguments) in [
            ("read_file", json!({"path": path})),
            ("write_file", json!({"path": path, "content": "x"})),
        ] {
            let refused = f.call(tool, arguments).await.unwrap_err();
            assert_eq!(refused.code.as_str(), "path_not_allowed", "{tool} {path:?}");
        }
    }
    for path in [
        "résumé.txt",
        "日本語.md",
        "naïve-café.txt",
        "a.b.c",
        "会議。メモ.txt",
    ] {
        f.call("write_file", json!({"path": path, "content": "ok"}))
            .await
            .unwrap_or_else(|error| panic!("{path}: {error:?}"));
    }
}

#[test]
fn tools_that_replace_files_say_they_are_destructive() {
    for template in files::tools() {
        let definition = template.definition();
        let replaces = matches!(
            definition.name.as_str(),
            "write_file" | "move_path" | "delete_directory"
        );
        assert_eq!(
            definition.hints.destructive, replaces,
            "{}",
            definition.name
        );
    }
}
