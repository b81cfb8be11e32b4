use toolgate::prelude::*;

/// Log in.
#[tool(permission = "public")]
fn login(user: String, #[secret(mask = "***")] password: String) -> String {
    let _ = password;
    user
}

fn main() {}
