//! Two tools with one name fail `build()`, with both source locations.

use toolgate::BuildProblem;
use toolgate::prelude::*;

/// The first.
#[tool(permission = "public", name = "lookup")]
fn lookup_a() -> u8 {
    1
}

/// The second.
#[tool(permission = "public", name = "lookup")]
fn lookup_b() -> u8 {
    2
}

#[test]
fn both_locations_are_named() {
    let error = Registry::builder().roles(["public"]).build().unwrap_err();
    let [BuildProblem::DuplicateName { name, locations }] = error.problems() else {
        panic!("{error}");
    };
    assert_eq!(name, "lookup");
    let mut lines: Vec<u32> = locations.iter().map(|l| l.as_ref().unwrap().line).collect();
    lines.sort();
    assert_eq!(lines, [8, 14]);
    assert!(
        error.to_string().contains("two tools are named `lookup`"),
        "{error}"
    );
}
