use toolgate::prelude::*;

/// Who am I?
#[tool(permission = "public")]
fn whoami(
    /// The caller.
    #[ctx]
    caller: Caller,
) -> String {
    caller.id().to_owned()
}

fn main() {}
