use toolgate::prelude::*;

/// Echo a value.
#[tool(permission = "public")]
fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
