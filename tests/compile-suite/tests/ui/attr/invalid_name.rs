use toolgate::prelude::*;

/// Get the weather.
#[tool(permission = "public", name = "get weather!")]
fn weather(city: String) -> String {
    city
}

fn main() {}
