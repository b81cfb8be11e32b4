use toolgate::prelude::*;

/// A customer.
#[tool(permission = "staff")]
struct Customer {
    name: String,
}

fn main() {}
