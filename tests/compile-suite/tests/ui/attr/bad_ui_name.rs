use toolgate::prelude::*;

/// Get a pet's card.
#[tool(permission = "staff", ui = "pet card")]
fn pet(id: u64) -> u64 {
    id
}

fn main() {}
