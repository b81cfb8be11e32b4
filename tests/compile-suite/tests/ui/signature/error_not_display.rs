use toolgate::prelude::*;

#[derive(Debug)]
struct ReportError;

/// Build a report.
#[tool(permission = "staff")]
fn build_report() -> Result<String, ReportError> {
    Err(ReportError)
}

fn main() {}
