use toolgate::prelude::*;

/// Send an invoice.
#[tool(permission = "staff", tags = "billing")]
fn send_invoice(id: u64) -> u64 {
    id
}

fn main() {}
