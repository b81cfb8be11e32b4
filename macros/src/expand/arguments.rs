//! The model's side of a tool: the hidden argument struct its schema and deserialization
//! come from, and a check that every argument type can be read from JSON.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::{Argument, Param, ToolFn};

/// The arguments (parameters not marked `#[ctx]`), in order.
pub(super) fn arguments(function: &ToolFn) -> Vec<&Argument> {
    function
        .params
        .iter()
        .filter_map(|param| match param {
            Param::Argument(argument) => Some(argument),
            Param::Context(_) => None,
        })
        .collect()
}

/// `__ToolArguments`, and `__assertions` reporting a type that cannot be an argument at its
/// parameter.
pub(super) fn argument_struct(arguments: &[&Argument]) -> TokenStream {
    let field_defs = arguments.iter().map(|argument| {
        let (ident, ty, field_attrs) = (&argument.ident, &argument.ty, &argument.field_attrs);
        quote!(#(#field_attrs)* #ident: #ty,)
    });
    let parameter_checks = arguments.iter().map(|argument| {
        let ty = &argument.ty;
        quote_spanned!(syn::spanned::Spanned::span(ty)=> ::toolgate::__private::assert_parameter::<#ty, _>();)
    });
    quote! {
        #[allow(dead_code, clippy::all)]
        fn __assertions() {
            #(#parameter_checks)*
        }

        #[derive(::toolgate::__private::serde::Deserialize, ::toolgate::__private::schemars::JsonSchema)]
        #[serde(crate = "::toolgate::__private::serde", deny_unknown_fields)]
        #[schemars(crate = "::toolgate::__private::schemars")]
        #[allow(non_camel_case_types, dead_code)]
        struct __ToolArguments {
            #(#field_defs)*
        }
    }
}

/// The JSON names of the `#[secret]` arguments.
pub(super) fn secret_keys(arguments: &[&Argument]) -> Vec<String> {
    arguments
        .iter()
        .filter(|argument| argument.secret)
        .map(|argument| argument.json_key())
        .collect()
}
