//! Whether an `async fn` tool finishes when first polled: its body has no `.await` and calls
//! no macro that could hide one. Such a tool runs in place when its call need not wait,
//! without its future being boxed.

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::ItemFn;

/// Macros that only format, assert or build values: they expand to no `.await` of their
/// own (an `.await` written in their arguments is seen like any other).
const PLAIN_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "concat",
    "debug",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "error",
    "format",
    "format_args",
    "info",
    "json",
    "matches",
    "panic",
    "stringify",
    "todo",
    "trace",
    "unimplemented",
    "unreachable",
    "vec",
    "warn",
    "write",
    "writeln",
];

/// Whether `item` is an `async fn` whose body cannot wait.
pub(super) fn finishes_when_first_polled(item: &ItemFn) -> bool {
    item.sig.asyncness.is_some() && !may_wait(quote::ToTokens::to_token_stream(&item.block))
}

/// Whether `tokens` hold an `await`, or a call of a macro not known to be plain.
fn may_wait(tokens: TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    tokens.iter().enumerate().any(|(index, token)| match token {
        TokenTree::Ident(ident) if ident == "await" => true,
        TokenTree::Ident(ident) => {
            is_macro_call(&tokens[index + 1..]) && !PLAIN_MACROS.iter().any(|name| ident == name)
        }
        TokenTree::Group(group) => may_wait(group.stream()),
        _ => false,
    })
}

/// Whether the tokens after a name make it a macro call: `!` on its own (not `!=`), then the
/// macro's input.
fn is_macro_call(after: &[TokenTree]) -> bool {
    match after {
        [TokenTree::Punct(bang), TokenTree::Group(_), ..] => {
            bang.as_char() == '!' && bang.spacing() == Spacing::Alone
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finishes(item: &str) -> bool {
        finishes_when_first_polled(&syn::parse_str(item).unwrap())
    }

    #[test]
    fn a_body_without_await_finishes() {
        assert!(finishes("async fn add(a: i64, b: i64) -> i64 { a + b }"));
        assert!(finishes(
            "async fn greet(name: String) -> String { if name != \"\" { format!(\"hi {name}\") } else { vec![1].len().to_string() } }"
        ));
    }

    #[test]
    fn an_await_anywhere_may_wait() {
        assert!(!finishes("async fn f() -> u8 { g().await }"));
        assert!(!finishes(
            "async fn f() -> u8 { let x = { h(g().await) }; x }"
        ));
        assert!(!finishes(
            "async fn f() -> String { format!(\"{}\", g().await) }"
        ));
        assert!(!finishes(
            "async fn f() -> u8 { let c = async { g().await }; 0 }"
        ));
    }

    #[test]
    fn an_unknown_macro_may_wait() {
        assert!(!finishes(
            "async fn f() -> u8 { tokio::select! { x = g() => x } }"
        ));
        assert!(!finishes("async fn f() -> u8 { my_macro!(1) }"));
        assert!(!finishes("async fn f() -> u8 { my_macro! { 1 } }"));
    }

    #[test]
    fn a_sync_function_is_not_run_in_place() {
        assert!(!finishes("fn f() -> u8 { 1 }"));
    }
}
