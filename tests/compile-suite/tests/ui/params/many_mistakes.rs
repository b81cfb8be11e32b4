use toolgate::prelude::*;

#[tool(permision = "staff", risk = "huge")]
fn bad<T>(name: &str, (a, b): (u8, u8), other: T) -> String {
    format!("{name}{a}{b}")
}

fn main() {}
