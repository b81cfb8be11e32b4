use toolgate::prelude::*;

/// Add a pair.
#[tool(permission = "public")]
fn add_pair((a, b): (u8, u8)) -> u16 {
    a as u16 + b as u16
}

fn main() {}
