//! Expansion of `#[tool]`: parse, check, then generate the function unchanged plus a hidden
//! argument struct (`arguments`), an invoke function (`invoke`) and the tool's record
//! (`record`), all inside `const _: () = { ... };`.

mod arguments;
mod immediate;
mod invoke;
mod record;

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::quote;
use syn::{Item, ItemFn};

use crate::ast::ToolFn;
use crate::attr::ToolAttrs;
use crate::check::{Checked, check};
use crate::ctxt::Ctxt;

pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::default();
    let Ok(Item::Fn(item)) = syn::parse2::<Item>(input.clone()) else {
        cx.syn_error(syn::Error::new(
            item_keyword_span(&input),
            "`#[tool]` can only be applied to a function: put it on the `fn` that implements the tool",
        ));
        let errors = cx.check();
        return quote!(#errors #input);
    };
    let attrs = ToolAttrs::parse(&cx, args);
    let mut item = item;
    let function = ToolFn::from_item(&cx, &mut item);
    let checked = check(&cx, &attrs, &item);
    match cx.check() {
        // The function alone (its parameter attributes removed), so only our errors show.
        Some(errors) => {
            // rustc rejects a variadic Rust fn on its own; we already said why.
            item.sig.variadic = None;
            quote!(#errors #item)
        }
        None => {
            let generated = generate(&attrs, &checked, &item, &function);
            quote!(#item #generated)
        }
    }
}

/// The span of an item's keyword (`struct`, `impl`, ...), past its attributes and
/// visibility, so the error points at what the item is.
fn item_keyword_span(input: &TokenStream) -> Span {
    let mut tokens = input.clone().into_iter().peekable();
    while let Some(token) = tokens.next() {
        match &token {
            // `#[...]`: skip the bracketed group too.
            TokenTree::Punct(punct) if punct.as_char() == '#' => {
                tokens.next();
            }
            TokenTree::Ident(ident) if ident == "pub" => {
                if matches!(tokens.peek(), Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Parenthesis)
                {
                    tokens.next();
                }
            }
            other => return other.span(),
        }
    }
    Span::call_site()
}

/// Everything generated beside the function.
fn generate(attrs: &ToolAttrs, checked: &Checked, item: &ItemFn, function: &ToolFn) -> TokenStream {
    let arguments = arguments::arguments(function);
    let argument_struct = arguments::argument_struct(&arguments);
    let invoke_items = invoke::invoke_items(item, function);
    let secrets = arguments::secret_keys(&arguments);
    let record = record::record(attrs, checked, item, &secrets);
    let items = quote! {
        #argument_struct
        #invoke_items
    };
    record::hand_over(attrs, &checked.name, item, items, record)
}
