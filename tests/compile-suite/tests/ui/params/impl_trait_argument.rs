use toolgate::prelude::*;

/// Greet someone.
#[tool(permission = "public")]
fn greet(name: impl Into<String>) -> String {
    name.into()
}

fn main() {}
