use toolgate::prelude::*;

/// Greet several people.
#[tool(permission = "public")]
fn greet_all(names: Vec<&'static str>) -> usize {
    names.len()
}

fn main() {}
