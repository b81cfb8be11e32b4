use toolgate::prelude::*;

/// Delete a customer.
#[tool(permission = "admin", risk = "extreme")]
fn delete_customer(id: u64) -> u64 {
    id
}

fn main() {}
