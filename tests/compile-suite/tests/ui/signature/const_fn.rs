use toolgate::prelude::*;

/// Add two numbers.
#[tool(permission = "public")]
const fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
