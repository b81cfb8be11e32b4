use toolgate::prelude::*;

struct Clinic;

/// List the clinic's pets.
#[tool(permission = "public")]
fn list_pets(clinic: State<Clinic>) -> Vec<String> {
    let _ = clinic;
    Vec::new()
}

fn main() {}
