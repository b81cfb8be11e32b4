use toolgate::prelude::*;

/// Read a setting.
#[tool(permission = "staff", read_only = true)]
fn read_setting(key: String) -> String {
    key
}

fn main() {}
