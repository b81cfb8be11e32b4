use toolgate::prelude::*;

/// Sum numbers.
#[tool(permission = "public")]
fn sum(first: i64, rest: ...) -> i64 {
    first
}

fn main() {}
