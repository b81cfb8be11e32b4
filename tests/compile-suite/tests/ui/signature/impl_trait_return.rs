use toolgate::prelude::*;

/// Describe the clinic.
#[tool(permission = "public")]
fn describe() -> impl serde::Serialize {
    "a clinic"
}

fn main() {}
