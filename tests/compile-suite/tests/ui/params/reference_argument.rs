use toolgate::prelude::*;

/// Greet someone.
#[tool(permission = "public")]
fn greet(name: &str) -> String {
    format!("hello {name}")
}

fn main() {}
