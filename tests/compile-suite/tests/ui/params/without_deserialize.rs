use toolgate::prelude::*;

#[derive(schemars::JsonSchema)]
struct Address {
    street: String,
}

/// Check an address.
#[tool(permission = "public")]
fn check_address(address: Address) -> bool {
    !address.street.is_empty()
}

fn main() {}
