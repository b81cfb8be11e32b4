use toolgate::prelude::*;

/// Convert a size.
#[tool(permission = "public")]
fn größe(value: f64) -> f64 {
    value
}

fn main() {}
