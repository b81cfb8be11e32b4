//! The runtime's side of a tool: `__invoke` (arguments in, the function called with its
//! context, its result turned into JSON), the output schema probe, and the state the tool
//! needs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{ItemFn, Type};

use crate::ast::{Context, Output, Param, ToolFn};

pub(super) fn invoke_items(item: &ItemFn, function: &ToolFn) -> TokenStream {
    let contexts: Vec<&Context> = function
        .params
        .iter()
        .filter_map(|param| match param {
            Param::Context(context) => Some(context),
            Param::Argument(_) => None,
        })
        .collect();
    let bindings = contexts.iter().map(|context| {
        let ident = context_ident(context);
        let ty = &context.ty;
        // `_name` gives `__context__name`, which the case lint would warn of in the user's
        // crate.
        quote_spanned!(syn::spanned::Spanned::span(ty)=>
            #[allow(non_snake_case)]
            let #ident = <#ty as ::toolgate::FromContext>::from_context(&__context)?;
        )
    });
    let context_types = contexts.iter().map(|context| &context.ty);
    // The context is made only for a function that takes part of it.
    let context_made = if contexts.is_empty() {
        quote!(let _ = __context;)
    } else {
        quote!(let __context = __context();)
    };
    let (ok_type, convert) = conversion(function, item.sig.asyncness.is_some());
    // The context's parts are taken inside the tool's future, so they are taken only for a
    // call that was authorized and is running.
    let bindings = quote!(#(#bindings)*);
    let call = call(item, function, context_made, bindings, convert);
    let exact_items = exact_items(item, function);
    quote! {
        fn __invoke(
            __context: &mut dyn ::core::ops::FnMut() -> ::toolgate::ToolContext,
            __arguments: &::toolgate::__private::serde_json::Value,
        ) -> ::toolgate::ToolFuture {
            match ::toolgate::__private::deserialize_arguments(__arguments) {
                ::core::result::Result::Ok(__arguments) => __start(__context, __arguments),
                ::core::result::Result::Err(__error) => ::toolgate::__private::ready_error(__error),
            }
        }

        #exact_items

        #call

        fn __output_schema() -> ::core::option::Option<::toolgate::__private::serde_json::Value> {
            #[allow(unused_imports)]
            use ::toolgate::__private::{OutputWithSchema as _, OutputWithoutSchema as _};
            (&::toolgate::__private::OutputProbe::<#ok_type>::new()).output_schema()
        }

        fn __returns_content() -> bool {
            #[allow(unused_imports)]
            use ::toolgate::__private::{OutputIsContent as _, OutputIsValue as _};
            (&::toolgate::__private::OutputProbe::<#ok_type>::new()).returns_content()
        }

        fn __requirements() -> ::std::vec::Vec<::toolgate::StateRequirement> {
            let mut __requirements = ::std::vec::Vec::new();
            #(__requirements.extend(<#context_types as ::toolgate::FromContext>::requirement());)*
            __requirements
        }
    }
}

/// `__exact_fields` (each argument's key and shape, or `None` when a type's shape is unknown
/// or a `#[serde]` attribute changes how it is read) and `__invoke_exact`, which reads the
/// arguments straight into `__ExactArguments`: each field through `__read_<name>`, which reads
/// its type as its shape says (a unit enum: a string among its names, then the type).
fn exact_items(item: &ItemFn, function: &ToolFn) -> TokenStream {
    let arguments = super::arguments::arguments(function);
    let serde_attributes = arguments.iter().any(|argument| {
        argument
            .field_attrs
            .iter()
            .any(|attr| attr.path().is_ident("serde"))
    });
    if serde_attributes {
        return quote! {
            const __INVOKE_NOW: ::core::option::Option<::toolgate::__private::NowInvoke> =
                ::core::option::Option::None;

            fn __exact_fields() -> ::core::option::Option<::std::vec::Vec<::toolgate::__private::ExactField>> {
                ::core::option::Option::None
            }

            fn __invoke_exact(
                _: &mut dyn ::core::ops::FnMut() -> ::toolgate::ToolContext,
                _: ::toolgate::__private::ExactInput<'_>,
            ) -> ::core::option::Option<::toolgate::ToolFuture> {
                ::core::option::Option::None
            }
        };
    }
    let probes = quote! {
        #[allow(unused_imports)]
        use ::toolgate::__private::{
            ReadKnown as _, ReadNamed as _, ReadOptionalNamed as _, ReadUnknown as _,
        };
    };
    let fields = arguments.iter().map(|argument| {
        let (key, ty) = (argument.json_key(), &argument.ty);
        quote! {
            ::toolgate::__private::ExactField {
                key: #key,
                shape: (&&&&::toolgate::__private::ShapeProbe::<#ty>::new()).shape()?,
            }
        }
    });
    let readers = arguments.iter().map(|argument| {
        let (reader, ty) = (reader_ident(argument), &argument.ty);
        quote! {
            #[allow(non_snake_case)]
            fn #reader<'de, D: ::toolgate::__private::serde::Deserializer<'de>>(
                from: D,
            ) -> ::core::result::Result<#ty, D::Error> {
                static NAMES: ::toolgate::__private::NameCache = ::toolgate::__private::NameCache::new();
                #probes
                (&&&&::toolgate::__private::ShapeProbe::<#ty>::new()).read(from, &NAMES)
            }
        }
    });
    let field_defs = arguments.iter().map(|argument| {
        let (ident, ty, key) = (&argument.ident, &argument.ty, argument.json_key());
        let reader = reader_ident(argument).to_string();
        // An `Option` may be left out, as serde's own reading allows.
        let default = is_option(ty).then(|| quote!(default,));
        quote!(#[serde(rename = #key, #default deserialize_with = #reader)] #ident: #ty,)
    });
    let idents: Vec<&syn::Ident> = arguments.iter().map(|argument| &argument.ident).collect();
    let invoke_now = invoke_now(item, &idents);
    quote! {
        fn __exact_fields() -> ::core::option::Option<::std::vec::Vec<::toolgate::__private::ExactField>> {
            #probes
            ::core::option::Option::Some(::std::vec![#(#fields),*])
        }

        #(#readers)*

        #[derive(::toolgate::__private::serde::Deserialize)]
        #[serde(crate = "::toolgate::__private::serde", deny_unknown_fields)]
        #[allow(non_camel_case_types, dead_code)]
        struct __ExactArguments {
            #(#field_defs)*
        }

        fn __invoke_exact(
            __context: &mut dyn ::core::ops::FnMut() -> ::toolgate::ToolContext,
            __arguments: ::toolgate::__private::ExactInput<'_>,
        ) -> ::core::option::Option<::toolgate::ToolFuture> {
            let __read: __ExactArguments = __arguments.read()?;
            let __arguments = __ToolArguments { #(#idents: __read.#idents),* };
            ::core::option::Option::Some(__start(__context, __arguments))
        }

        #invoke_now
    }
}

/// `__INVOKE_NOW`: for an async function that finishes when first polled, `__invoke_now`,
/// which reads the arguments straight into the parameters, asks `__may_run` (the registry
/// authorizes the call), and runs the function in place, its future never boxed.
fn invoke_now(item: &ItemFn, idents: &[&syn::Ident]) -> TokenStream {
    if !super::immediate::finishes_when_first_polled(item) {
        return quote! {
            const __INVOKE_NOW: ::core::option::Option<::toolgate::__private::NowInvoke> =
                ::core::option::Option::None;
        };
    }
    quote! {
        const __INVOKE_NOW: ::core::option::Option<::toolgate::__private::NowInvoke> =
            ::core::option::Option::Some(__invoke_now);

        fn __invoke_now(
            __context: &mut dyn ::core::ops::FnMut() -> ::toolgate::ToolContext,
            __arguments: ::toolgate::__private::ExactInput<'_>,
            __may_run: &mut dyn ::core::ops::FnMut() -> bool,
            __form: ::toolgate::__private::ResultForm,
        ) -> ::toolgate::__private::Now {
            let ::core::option::Option::Some(__read) = __arguments.read::<__ExactArguments>() else {
                return ::toolgate::__private::Now::Unread;
            };
            if !__may_run() {
                return ::toolgate::__private::Now::NotRun;
            }
            let __arguments = __ToolArguments { #(#idents: __read.#idents),* };
            __launch(__context, __arguments, ::toolgate::__private::RunNow(__form))
        }
    }
}

fn reader_ident(argument: &crate::ast::Argument) -> syn::Ident {
    format_ident!("__read_{}", argument.ident.unraw())
}

/// Whether a type is written `Option<..>` (serde's own reading lets such a field be left out).
fn is_option(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    path.qself.is_none()
        && path.path.segments.last().is_some_and(|last| {
            last.ident == "Option"
                && matches!(&last.arguments, syn::PathArguments::AngleBracketed(generic) if generic.args.len() == 1)
        })
}

fn context_ident(context: &Context) -> syn::Ident {
    format_ident!("__context_{}", context.ident.unraw())
}

/// `__start`: the function called with its arguments and context, as a boxed future (sync
/// functions on the blocking pool). An async function's future is made once, in `__launch`,
/// which boxes it for `__start` or runs it in place for `__invoke_now`.
fn call(
    item: &ItemFn,
    function: &ToolFn,
    context_made: TokenStream,
    bindings: TokenStream,
    convert: TokenStream,
) -> TokenStream {
    let fn_ident = &item.sig.ident;
    let call_args = function.params.iter().map(|param| match param {
        Param::Argument(argument) => {
            let ident = &argument.ident;
            quote!(__arguments.#ident)
        }
        Param::Context(context) => {
            let ident = context_ident(context);
            quote!(#ident)
        }
    });
    let start = quote! {
        fn __start(
            __context: impl ::core::ops::FnOnce() -> ::toolgate::ToolContext,
            __arguments: __ToolArguments,
        ) -> ::toolgate::ToolFuture
    };
    if item.sig.asyncness.is_none() {
        return quote! {
            #start {
                #context_made
                ::std::boxed::Box::pin(::toolgate::__private::run_blocking(move || {
                    #bindings
                    let __output = #fn_ident(#(#call_args),*);
                    #convert
                }))
            }
        };
    }
    let future = quote!(async move {
        #bindings
        let __output = #fn_ident(#(#call_args),*).await;
        #convert
    });
    let launched = quote_spanned!(fn_ident.span()=> ::toolgate::__private::Launch::launch(__launcher, #future));
    quote! {
        fn __launch<__Launcher: ::toolgate::__private::Launch>(
            __context: impl ::core::ops::FnOnce() -> ::toolgate::ToolContext,
            __arguments: __ToolArguments,
            __launcher: __Launcher,
        ) -> __Launcher::Output {
            #context_made
            let __form = ::toolgate::__private::Launch::form(&__launcher);
            #launched
        }

        #start {
            __launch(__context, __arguments, ::toolgate::__private::Boxed)
        }
    }
}

/// The type of a successful result, and the code turning `__output` into the call's result:
/// a value for a synchronous function, the form `__form` asks for in an async one.
fn conversion(function: &ToolFn, asynchronous: bool) -> (Type, TokenStream) {
    let output_span = function.output_span;
    // The value's name takes the span too: a misfit type is reported at the return type.
    let to_json = |span, value: &str| {
        let value = syn::Ident::new(value, span);
        match asynchronous {
            true => quote_spanned!(span=> ::toolgate::__private::output_as(#value, __form)),
            false => quote_spanned!(span=> ::toolgate::__private::output_to_value(#value)),
        }
    };
    match &function.output {
        Output::Result { ok } => {
            let ok_to_value = to_json(syn::spanned::Spanned::span(ok), "__value");
            let convert = quote_spanned!(output_span=>
                match __output {
                    ::core::result::Result::Ok(__value) => #ok_to_value,
                    ::core::result::Result::Err(__error) => {
                        #[allow(unused_imports)]
                        use ::toolgate::__private::{ErrorIsDisplay as _, ErrorIsToolError as _};
                        ::toolgate::__private::assert_result_error(&__error);
                        ::core::result::Result::Err((&::toolgate::__private::ErrorProbe(__error)).to_tool_error())
                    }
                }
            );
            (ok.clone(), convert)
        }
        Output::Plain(ty) => (ty.clone(), to_json(output_span, "__output")),
    }
}
