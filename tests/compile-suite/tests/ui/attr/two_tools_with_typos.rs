use toolgate::prelude::*;

/// Read a setting.
#[tool(permission = "staff", readonly)]
fn read_setting(key: String) -> String {
    key
}

/// Write a setting.
#[tool(permision = "admin")]
fn write_setting(key: String, value: String) -> String {
    format!("{key}={value}")
}

fn main() {}
