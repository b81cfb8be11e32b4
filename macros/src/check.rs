//! What a tool must have before anything is generated: a valid name, a description and a
//! permission. Runs after parsing and before expansion, reporting each missing piece at its
//! token; expansion then works from the checked values only.

use proc_macro2::Span;
use syn::ItemFn;
use syn::ext::IdentExt;

use crate::attr::ToolAttrs;
use crate::ctxt::Ctxt;
use crate::doc::doc_text;

/// A tool's identity, checked.
pub(crate) struct Checked {
    pub(crate) name: String,
    pub(crate) description: String,
    /// Empty for a `manual` tool: the application gives it one.
    pub(crate) permission: String,
}

pub(crate) fn check(cx: &Ctxt, attrs: &ToolAttrs, item: &ItemFn) -> Checked {
    let name = name(cx, attrs, item);
    let description = description(cx, attrs, item, &name);
    let permission = permission(cx, attrs, &name);
    Checked {
        name,
        description,
        permission,
    }
}

fn name(cx: &Ctxt, attrs: &ToolAttrs, item: &ItemFn) -> String {
    let fn_ident = &item.sig.ident;
    match &attrs.name {
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
    }
}

fn description(cx: &Ctxt, attrs: &ToolAttrs, item: &ItemFn, name: &str) -> String {
    match (&attrs.description, doc_text(&item.attrs)) {
        (Some(description), _) => description.value.clone(),
        (None, Some(doc)) => doc,
        (None, None) => {
            cx.error_spanned_by(
                &item.sig.ident,
                format!("tool `{name}` has no description: add a `///` doc comment saying what it does, or `description = \"...\"`; the model reads it to decide when to call the tool"),
            );
            String::new()
        }
    }
}

fn permission(cx: &Ctxt, attrs: &ToolAttrs, name: &str) -> String {
    attrs.permission.clone().unwrap_or_else(|| {
        if attrs.permission_truly_missing() {
            cx.syn_error(syn::Error::new(
            Span::call_site(),
            format!("tool `{name}` has no `permission`: add `permission = \"<role>\"` naming the lowest role that may see and call it (or mark it `manual` to let the application give it one)"),
            ));
        }
        String::new()
    })
}

/// The rule providers set for tool names; the runtime's `is_valid_tool_name` states the same
/// rule for tools made at run time (a proc-macro crate cannot export a function to share).
fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
}

fn invalid_name_message(name: &str) -> String {
    format!(
        "invalid tool name \"{name}\": a tool name is 1 to 64 ASCII letters, digits, `_`, `-`, `.` or `/` (MCP's tool name format); set one with `name = \"...\"`"
    )
}
