use toolgate::prelude::*;

/// Describe the clinic.
#[tool(permission = "public")]
fn describe() -> Result<impl serde::Serialize, ToolError> {
    Ok("a clinic")
}

fn main() {}
