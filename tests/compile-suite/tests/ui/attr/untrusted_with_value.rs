use toolgate::prelude::*;

/// Fetch a page someone else wrote.
#[tool(permission = "public", untrusted = "yes")]
fn fetch_page(url: String) -> String {
    url
}

fn main() {}
