use toolgate::prelude::*;

/// Export every record.
#[tool(permission = "staff", timeout = "5 seconds")]
async fn export_records() -> String {
    String::new()
}

fn main() {}
