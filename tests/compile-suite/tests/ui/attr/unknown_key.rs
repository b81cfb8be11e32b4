use toolgate::prelude::*;

/// Look up a customer.
#[tool(permision = "staff")]
fn find_customer(name: String) -> String {
    name
}

fn main() {}
