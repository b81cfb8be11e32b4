use toolgate::prelude::*;

#[derive(serde::Deserialize)]
struct Address {
    street: String,
}

/// Check an address.
#[tool(permission = "public")]
fn check_address(address: Address) -> bool {
    !address.street.is_empty()
}

fn main() {}
