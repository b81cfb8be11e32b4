//! Expansion of `#[tool]`: the function unchanged, plus a hidden argument struct, an invoke
//! function and an `inventory` record, all inside `const _: () = { ... };`.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Item, ItemFn};

use crate::ast::{Output, Param, ToolFn};
use crate::attr::ToolAttrs;
use crate::ctxt::Ctxt;
use crate::doc::doc_text;

pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::default();
    let Ok(Item::Fn(item)) = syn::parse2::<Item>(input.clone()) else {
        cx.syn_error(syn::Error::new(
            item_keyword_span(&input),
            "`#[tool]` can only be applied to a function: put it on the `fn` that implements the tool",
        ));
        let errors = cx.into_compile_errors();
        return quote!(#errors #input);
    };
    let attrs = ToolAttrs::parse(&cx, args);
    let mut item = item;
    let function = ToolFn::from_item(&cx, &mut item);
    let generated = generate(&cx, &attrs, &item, &function);
    let errors = cx.has_errors().then(|| cx.into_compile_errors());
    match errors {
        // The function alone (its parameter attributes removed), so only our errors show.
        Some(errors) => {
            // rustc rejects a variadic Rust fn on its own; we already said why.
            item.sig.variadic = None;
            quote!(#errors #item)
        }
        None => quote!(#item #generated),
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

fn generate(cx: &Ctxt, attrs: &ToolAttrs, item: &ItemFn, function: &ToolFn) -> TokenStream {
    let fn_ident = &item.sig.ident;
    let name = match &attrs.name {
        Some(name) => {
            if !is_valid_tool_name(&name.value) {
                cx.syn_error(syn::Error::new(
                    name.span,
                    invalid_name_message(&name.value),
                ));
            }
            name.value.clone()
        }
        None => {
            let name = fn_ident.unraw().to_string();
            if !is_valid_tool_name(&name) {
                cx.error_spanned_by(fn_ident, invalid_name_message(&name));
            }
            name
        }
    };
    let description = match (&attrs.description, doc_text(&item.attrs)) {
        (Some(description), _) => description.value.clone(),
        (None, Some(doc)) => doc,
        (None, None) => {
            cx.error_spanned_by(
                fn_ident,
                format!("tool `{name}` has no description: add a `///` doc comment saying what it does, or `description = \"...\"`; the model reads it to decide when to call the tool"),
            );
            String::new()
        }
    };
    let permission = attrs.permission.clone().unwrap_or_else(|| {
        if attrs.permission_truly_missing() {
            cx.syn_error(syn::Error::new(
            Span::call_site(),
            format!("tool `{name}` has no `permission`: add `permission = \"<role>\"` naming the lowest role that may see and call it (or mark it `manual` to let the application give it one)"),
            ));
        }
        String::new()
    });

    let arguments: Vec<_> = function
        .params
        .iter()
        .filter_map(|param| match param {
            Param::Argument(argument) => Some(argument),
            Param::Context(_) => None,
        })
        .collect();
    let field_defs = arguments.iter().map(|argument| {
        let (ident, ty, field_attrs) = (&argument.ident, &argument.ty, &argument.field_attrs);
        quote!(#(#field_attrs)* #ident: #ty,)
    });
    let parameter_checks = arguments.iter().map(|argument| {
        let ty = &argument.ty;
        quote_spanned!(syn::spanned::Spanned::span(ty)=> ::toolgate::__private::assert_parameter::<#ty, _>();)
    });
    let call_args = function.params.iter().map(|param| match param {
        Param::Argument(argument) => {
            let ident = &argument.ident;
            quote!(__arguments.#ident)
        }
        Param::Context(context) => {
            let ident = format_ident!("__context_{}", context.ident.unraw());
            quote!(#ident)
        }
    });
    let context_bindings = function.params.iter().filter_map(|param| match param {
        Param::Context(context) => {
            let ident = format_ident!("__context_{}", context.ident.unraw());
            let ty = &context.ty;
            Some(quote_spanned!(syn::spanned::Spanned::span(ty)=>
                let #ident = <#ty as ::toolgate::FromContext>::from_context(&__context)?;
            ))
        }
        Param::Argument(_) => None,
    });
    let context_types: Vec<_> = function
        .params
        .iter()
        .filter_map(|param| match param {
            Param::Context(context) => Some(&context.ty),
            Param::Argument(_) => None,
        })
        .collect();

    let output_span = function.output_span;
    let ok_to_value = match &function.output {
        Output::Result { ok } => {
            quote_spanned!(syn::spanned::Spanned::span(ok)=> ::toolgate::__private::output_to_value(&__value))
        }
        Output::Plain(_) => TokenStream::new(),
    };
    let (ok_type, convert) = match &function.output {
        Output::Result { ok } => (
            ok.clone(),
            quote_spanned!(output_span=>
                match __output {
                    ::core::result::Result::Ok(__value) => #ok_to_value,
                    ::core::result::Result::Err(__error) => {
                        #[allow(unused_imports)]
                        use ::toolgate::__private::{ErrorIsDisplay as _, ErrorIsToolError as _};
                        ::toolgate::__private::assert_result_error(&__error);
                        ::core::result::Result::Err((&::toolgate::__private::ErrorProbe(__error)).to_tool_error())
                    }
                }
            ),
        ),
        Output::Plain(ty) => (
            ty.clone(),
            quote_spanned!(output_span=> ::toolgate::__private::output_to_value(&__output)),
        ),
    };

    let call_and_convert = if item.sig.asyncness.is_some() {
        let fn_span = fn_ident.span();
        let future = quote!(async move {
            let __output = #fn_ident(#(#call_args),*).await;
            #convert
        });
        quote_spanned!(fn_span=> ::toolgate::__private::boxed_tool_future(#future))
    } else {
        quote!(::std::boxed::Box::pin(::toolgate::__private::run_blocking(move || {
            let __output = #fn_ident(#(#call_args),*);
            #convert
        })))
    };
    let invoke_body = quote! {
        let __arguments: __ToolArguments = match ::toolgate::__private::deserialize_arguments(__arguments) {
            ::core::result::Result::Ok(__arguments) => __arguments,
            ::core::result::Result::Err(__error) => return ::toolgate::__private::ready_error(__error),
        };
        let __prepared = (|| -> ::core::result::Result<_, ::toolgate::ToolError> {
            #(#context_bindings)*
            ::core::result::Result::Ok(#call_and_convert)
        })();
        match __prepared {
            ::core::result::Result::Ok(__future) => __future,
            ::core::result::Result::Err(__error) => ::toolgate::__private::ready_error(__error),
        }
    };

    let title = option_str(attrs.title.as_deref());
    let group = option_str(attrs.group.as_deref());
    let tags = &attrs.tags;
    let risk = format_ident!(
        "{}",
        match attrs.risk.unwrap_or("low") {
            "medium" => "Medium",
            "high" => "High",
            "critical" => "Critical",
            _ => "Low",
        }
    );
    let read_only = attrs.read_only.is_some();
    let destructive = attrs.destructive.is_some();
    let idempotent = attrs.idempotent;
    let open_world = attrs.open_world;
    let timeout = match attrs.timeout_ms {
        Some(millis) => quote!(::core::option::Option::Some(#millis)),
        None => quote!(::core::option::Option::None),
    };
    let line = quote_spanned!(fn_ident.span()=> ::core::line!());
    let secrets: Vec<String> = arguments
        .iter()
        .filter(|argument| argument.secret)
        .map(|argument| argument.json_key())
        .collect();

    let items = quote! {
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

        fn __invoke(
            __context: ::toolgate::ToolContext,
            __arguments: ::toolgate::__private::serde_json::Value,
        ) -> ::toolgate::ToolFuture {
            #invoke_body
        }

        fn __output_schema() -> ::core::option::Option<::toolgate::__private::serde_json::Value> {
            #[allow(unused_imports)]
            use ::toolgate::__private::{OutputWithSchema as _, OutputWithoutSchema as _};
            (&::toolgate::__private::OutputProbe::<#ok_type>::new()).output_schema()
        }

        fn __requirements() -> ::std::vec::Vec<::toolgate::StateRequirement> {
            let mut __requirements = ::std::vec::Vec::new();
            #(__requirements.extend(<#context_types as ::toolgate::FromContext>::requirement());)*
            __requirements
        }
    };
    let record = quote! {
        ::toolgate::__private::StaticTool {
            name: #name,
            title: #title,
            description: #description,
            group: #group,
            tags: &[#(#tags),*],
            permission: #permission,
            risk: ::toolgate::Risk::#risk,
            hints: ::toolgate::Hints {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            },
            timeout_ms: #timeout,
            secrets: &[#(#secrets),*],
            file: ::core::file!(),
            line: #line,
            input_schema: ::toolgate::__private::input_schema::<__ToolArguments>,
            output_schema: __output_schema,
            requirements: __requirements,
            invoke: __invoke,
        }
    };
    if attrs.manual {
        // Not registered: the application takes it with `<name>_tool()` and gives it a
        // permission of its own.
        let vis = &item.vis;
        let constructor = format_ident!("{}_tool", fn_ident.unraw());
        let doc = format!(
            "The `{name}` tool, to register with a permission: `{constructor}().permission(\"role\")`."
        );
        return quote! {
            #[doc = #doc]
            #vis fn #constructor() -> ::toolgate::ToolTemplate {
                #items
                static __TOOL: ::toolgate::__private::StaticTool = #record;
                ::toolgate::ToolTemplate::from_static(&__TOOL)
            }
        };
    }
    quote! {
        #[doc(hidden)]
        const _: () = {
            #items
            ::toolgate::__private::inventory::submit! { #record }
        };
    }
}

fn option_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn invalid_name_message(name: &str) -> String {
    format!(
        "invalid tool name \"{name}\": a tool name is 1 to 64 ASCII letters, digits, `_` or `-` (as providers require); set one with `name = \"...\"`"
    )
}
