use toolgate::prelude::*;

/// Look up a customer.
#[tool(permission = staff)]
fn find_customer(name: String) -> String {
    name
}

fn main() {}
