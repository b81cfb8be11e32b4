use toolgate::prelude::*;

/// Who am I?
#[tool(permission = "public")]
fn whoami(#[ctx] caller: &Caller) -> String {
    caller.id().to_owned()
}

fn main() {}
