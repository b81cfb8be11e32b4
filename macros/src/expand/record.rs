//! What the runtime reads about a tool (`StaticTool`), and how it is handed over: submitted
//! to `inventory`, or, for a `manual` tool, returned by `<name>_tool()`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;
use syn::ext::IdentExt;

use crate::attr::ToolAttrs;
use crate::check::Checked;

/// The `StaticTool` literal.
pub(super) fn record(
    attrs: &ToolAttrs,
    checked: &Checked,
    item: &ItemFn,
    secrets: &[String],
) -> TokenStream {
    let Checked {
        name,
        description,
        permission,
    } = checked;
    let title = option_str(attrs.title.as_deref());
    let ui = option_str(attrs.ui.as_deref());
    let group = option_str(attrs.group.as_deref());
    let tags = &attrs.tags;
    let risk = format_ident!("{}", attrs.risk.variant());
    let read_only = attrs.read_only.is_some();
    let destructive = attrs.destructive.is_some();
    let (idempotent, open_world) = (attrs.idempotent, attrs.open_world);
    let untrusted = attrs.untrusted;
    let timeout = match attrs.timeout_ms {
        Some(millis) => quote!(::core::option::Option::Some(#millis)),
        None => quote!(::core::option::Option::None),
    };
    let line = quote_spanned!(item.sig.ident.span()=> ::core::line!());
    quote! {
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
            untrusted_results: #untrusted,
            ui: #ui,
            secrets: &[#(#secrets),*],
            file: ::core::file!(),
            line: #line,
            input_schema: ::toolgate::__private::input_schema::<__ToolArguments>,
            output_schema: __output_schema,
            returns_content: __returns_content,
            requirements: __requirements,
            invoke: __invoke,
            exact_fields: __exact_fields,
            invoke_exact: __invoke_exact,
            invoke_now: __INVOKE_NOW,
        }
    }
}

/// Registers the tool through `inventory`, or, for a `manual` tool, generates
/// `<name>_tool()` for the application to register with a permission of its own.
pub(super) fn hand_over(
    attrs: &ToolAttrs,
    name: &str,
    item: &ItemFn,
    items: TokenStream,
    record: TokenStream,
) -> TokenStream {
    if !attrs.manual {
        return quote! {
            #[doc(hidden)]
            const _: () = {
                #items
                ::toolgate::__private::inventory::submit! { #record }
            };
        };
    }
    let vis = &item.vis;
    let constructor = format_ident!("{}_tool", item.sig.ident.unraw());
    let doc = format!(
        "The `{name}` tool, to register with a permission: `{constructor}().permission(\"role\")`."
    );
    quote! {
        #[doc = #doc]
        #vis fn #constructor() -> ::toolgate::ToolTemplate {
            #items
            static __TOOL: ::toolgate::__private::StaticTool = #record;
            ::toolgate::ToolTemplate::from_static(&__TOOL)
        }
    }
}

fn option_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}
