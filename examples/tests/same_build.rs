//! The README's two commands build one tree: every crate `cargo run -p toolgate-examples
//! --bin clinic` compiles, `cargo test --workspace` compiles with the same features, so the
//! suite reuses what the main example built. When a dependency's features drift apart, this
//! names the crate and what to add to `examples/Cargo.toml`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each crate `cargo tree` lists, with the feature sets it is built with (a crate built for
/// build scripts and for the program may have two).
fn crates_and_features(selection: &[&str], edges: &str) -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree", "--locked", "--prefix", "none", "-f", "{p}|{f}", "-e", edges,
        ])
        .args(selection)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut crates: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let line = line.trim_end_matches(" (*)");
        if let Some((package, features)) = line.split_once('|') {
            crates
                .entry(package.to_owned())
                .or_default()
                .insert(features.to_owned());
        }
    }
    crates
}

#[test]
fn the_main_example_and_the_suite_build_each_crate_with_the_same_features() {
    let example = crates_and_features(&["-p", "toolgate-examples"], "normal,build");
    let suite = crates_and_features(&["--workspace"], "normal,build,dev");
    assert!(example.len() > 100, "the example's tree: {example:?}");
    let drifted: Vec<String> = example
        .iter()
        .filter_map(|(package, built)| {
            let in_suite = suite.get(package)?;
            let missing: Vec<&String> = built.difference(in_suite).collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "{package}: the example builds it with {missing:?}, the suite with {in_suite:?}"
                )
            })
        })
        .collect();
    assert!(
        drifted.is_empty(),
        "`cargo test --workspace` would build these again; give them the suite's features \
         in examples/Cargo.toml (the block under `evalexpr`):\n{}",
        drifted.join("\n")
    );
}
