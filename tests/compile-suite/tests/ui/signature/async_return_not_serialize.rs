use toolgate::prelude::*;

struct Report {
    lines: Vec<String>,
}

/// Build a report.
#[tool(permission = "staff")]
async fn build_report() -> Report {
    Report { lines: Vec::new() }
}

fn main() {}
