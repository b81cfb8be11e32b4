use toolgate::prelude::*;

/// Export every record.
#[tool(permission = "staff", timeout = "0ms")]
async fn export_records() -> String {
    String::new()
}

fn main() {}
