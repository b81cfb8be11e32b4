use toolgate::prelude::*;

/// Read raw memory.
#[tool(permission = "admin")]
unsafe fn peek(address: u64) -> u64 {
    address
}

fn main() {}
