use std::rc::Rc;

use toolgate::prelude::*;

async fn fetch() -> u32 {
    1
}

/// Count visits.
#[tool(permission = "public")]
async fn count_visits() -> u32 {
    let counter = Rc::new(1);
    let fetched = fetch().await;
    *counter + fetched
}

fn main() {}
