use toolgate::prelude::*;

struct Database;

/// Count rows.
#[tool(permission = "staff")]
fn count_rows(#[ctx] db: Database) -> u64 {
    let _ = db;
    0
}

fn main() {}
