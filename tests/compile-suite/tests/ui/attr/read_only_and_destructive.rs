use toolgate::prelude::*;

/// Purge the cache.
#[tool(permission = "admin", read_only, destructive)]
fn purge_cache() -> bool {
    true
}

fn main() {}
