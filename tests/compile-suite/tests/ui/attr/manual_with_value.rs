use toolgate::prelude::*;

/// Echo the text back.
#[tool(manual = true, read_only)]
pub fn echo(text: String) -> String {
    text
}

fn main() {}
