//! No two modules of the runtime import each other, directly or round a circle: at the top
//! of `runtime/src`, inside `registry/`, inside the call's path (`registry/path/`) and among
//! the adapters. Read from the source: a module's imports are the `crate::…` paths (and, for
//! a folder's own files, the `super::…` ones) its code names, comments and unit tests left
//! out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The runtime's sources.
fn runtime_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src")
}

/// The `.rs` files under `path` (itself, if it is one).
fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let mut files = Vec::new();
    for entry in fs::read_dir(path).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() || path.extension().is_some_and(|ext| ext == "rs") {
            files.extend(rust_files(&path));
        }
    }
    files
}

/// A file's code: comments and its unit tests left out.
fn code_of(file: &Path) -> String {
    let text = fs::read_to_string(file).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(tests) => &text[..tests],
        None => &text,
    };
    let lines = text.lines().map(|line| match line.find("//") {
        Some(comment) => &line[..comment],
        None => line,
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// The names that follow `prefix` in `code` (`crate::registry::` → `path`, `find`, ...).
fn named_after<'c>(code: &'c str, prefix: &str) -> impl Iterator<Item = &'c str> {
    code.match_indices(prefix).map(move |(at, _)| {
        let rest = &code[at + prefix.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        &rest[..end]
    })
}

/// Which of the modules in `folder` (its files and subfolders) each imports.
fn imports_in(folder: &Path, prefix: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules = BTreeMap::new();
    for entry in fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let is_module = path.is_dir() || path.extension().is_some_and(|ext| ext == "rs");
        if is_module && name != "mod" && name != "lib" {
            modules.insert(name, path);
        }
    }
    let mut imports = BTreeMap::new();
    for (name, path) in &modules {
        let mut named = BTreeSet::new();
        for file in rust_files(path) {
            let code = code_of(&file);
            let mut found: Vec<&str> = named_after(&code, prefix).collect();
            if file.parent() == Some(folder) {
                found.extend(named_after(&code, "super::"));
            }
            for other in found {
                if other != name && modules.contains_key(other) {
                    named.insert(other.to_owned());
                }
            }
        }
        imports.insert(name.clone(), named);
    }
    imports
}

/// The circles among `imports`: groups of two or more modules that reach each other.
fn circles(imports: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut next = vec![from.to_owned()];
        while let Some(module) = next.pop() {
            for other in &imports[&module] {
                if seen.insert(other.clone()) {
                    next.push(other.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<_, _> = imports.keys().map(|m| (m.clone(), reaches(m))).collect();
    let mut circles = BTreeSet::new();
    for module in imports.keys() {
        let circle: BTreeSet<String> = imports
            .keys()
            .filter(|other| reached[module].contains(*other) && reached[*other].contains(module))
            .cloned()
            .collect();
        if circle.len() > 1 {
            circles.insert(circle);
        }
    }
    circles.into_iter().collect()
}

#[test]
fn no_two_modules_import_each_other() {
    let src = runtime_src();
    let folders = [
        (src.clone(), "crate::"),
        (src.join("registry"), "crate::registry::"),
        (src.join("registry/path"), "crate::registry::path::"),
        (src.join("adapters"), "crate::adapters::"),
    ];
    for (folder, prefix) in folders {
        let imports = imports_in(&folder, prefix);
        assert!(imports.len() > 2, "{}: modules read", folder.display());
        assert_eq!(circles(&imports), [], "{}", folder.display());
    }
}

#[test]
fn a_circle_is_found_where_there_is_one() {
    let mut imports = BTreeMap::new();
    let set = |names: &[&str]| names.iter().map(|name| name.to_string()).collect();
    imports.insert("a".to_owned(), set(&["b"]));
    imports.insert("b".to_owned(), set(&["c"]));
    imports.insert("c".to_owned(), set(&["a"]));
    imports.insert("d".to_owned(), set(&["a"]));
    assert_eq!(circles(&imports), [set(&["a", "b", "c"])]);
}
