//! The `#[tool]` attribute of [toolgate](https://docs.rs/toolgate).
//!
//! Depend on `toolgate`, which re-exports this macro; generated code refers only to
//! `::toolgate::__private`. Parsing, checks and expansion live in separate files; every
//! mistake is collected and reported at its own token, and on error the function is emitted
//! unchanged so no follow-on errors appear.

mod ast;
mod attr;
mod check;
mod ctxt;
mod doc;
mod expand;
mod timeout;

use proc_macro::TokenStream;

/// Makes a function a tool a language model can call. See the `toolgate` crate for the
/// keys and examples.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}
