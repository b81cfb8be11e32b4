//! A tool asking for state the registry was not given fails `build()`, naming both.

use toolgate::BuildProblem;
use toolgate::prelude::*;

struct Inventory;

/// Count stock.
#[tool(permission = "staff")]
fn count_stock(#[ctx] inventory: State<Inventory>) -> u32 {
    let _ = inventory;
    1
}

#[test]
fn build_names_the_tool_and_the_missing_type() {
    let error = Registry::builder().roles(["staff"]).build().unwrap_err();
    let [
        BuildProblem::MissingState {
            tool, type_name, ..
        },
    ] = error.problems()
    else {
        panic!("{error}");
    };
    assert_eq!(tool, "count_stock");
    assert!(type_name.ends_with("Inventory"), "{type_name}");
    assert!(error.to_string().contains("takes `State<missing_state::Inventory>`, but the registry has no `missing_state::Inventory`"), "{error}");
}

#[test]
fn given_the_state_it_builds() {
    assert!(
        Registry::builder()
            .roles(["staff"])
            .state(Inventory)
            .build()
            .is_ok()
    );
}
