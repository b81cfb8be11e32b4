use toolgate::prelude::*;

struct Report {
    lines: Vec<String>,
}

/// Build a report.
#[tool(permission = "staff")]
fn build_report() -> Result<Report, ToolError> {
    Ok(Report { lines: Vec::new() })
}

fn main() {}
