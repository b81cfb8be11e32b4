use toolgate::prelude::*;

/// Get a pet's card.
#[tool(permission = "staff", ui)]
fn pet(id: u64) -> u64 {
    id
}

fn main() {}
