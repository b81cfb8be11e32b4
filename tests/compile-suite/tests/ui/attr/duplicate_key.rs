use toolgate::prelude::*;

/// Look up a customer.
#[tool(permission = "staff", group = "crm", permission = "admin")]
fn find_customer(name: String) -> String {
    name
}

fn main() {}
