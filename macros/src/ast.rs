//! The function under `#[tool]`: its parameters sorted into arguments and context, and
//! every shape a tool cannot have reported.

use proc_macro2::Span;
use syn::visit::{self, Visit};
use syn::{
    Attribute, FnArg, GenericArgument, ItemFn, Pat, PathArguments, ReturnType, Safety, Type,
};

use crate::ctxt::Ctxt;
use crate::doc::is_doc;

/// Marks a parameter injected from the context rather than read from the arguments.
const CTX: &str = "ctx";
/// Marks a parameter whose value is redacted in audit records.
const SECRET: &str = "secret";

/// One parameter the model fills in.
pub(crate) struct Argument {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
    /// `///`, `#[serde]` and `#[schemars]` attributes, moved to the argument struct.
    pub(crate) field_attrs: Vec<Attribute>,
    /// Marked `#[secret]`.
    pub(crate) secret: bool,
}

impl Argument {
    /// The argument's key in the JSON object: its name, or its `#[serde(rename = "..")]`.
    pub(crate) fn json_key(&self) -> String {
        let mut key = syn::ext::IdentExt::unraw(&self.ident).to_string();
        for attr in self
            .field_attrs
            .iter()
            .filter(|attr| attr.path().is_ident("serde"))
        {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") && meta.input.peek(syn::Token![=]) {
                    let renamed: syn::LitStr = meta.value()?.parse()?;
                    key = renamed.value();
                } else if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                } else if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|_| Ok(()))?;
                }
                Ok(())
            });
        }
        key
    }
}

/// One `#[ctx]` parameter.
pub(crate) struct Context {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
}

pub(crate) enum Param {
    Argument(Argument),
    Context(Context),
}

/// What the function returns.
pub(crate) enum Output {
    /// `-> Result<T, E>` (any path ending in `Result`); `ok` is `T`.
    Result { ok: Type },
    /// `-> T`, or nothing (`()`).
    Plain(Type),
}

pub(crate) struct ToolFn {
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
    pub(crate) output_span: Span,
}

impl ToolFn {
    /// Reads the function, strips the attributes it moves elsewhere from `item`, and records
    /// every unsupported shape in `cx`.
    pub(crate) fn from_item(cx: &Ctxt, item: &mut ItemFn) -> ToolFn {
        check_signature(cx, item);
        let mut params = Vec::new();
        for input in item.sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(receiver) => cx.error_spanned_by(
                    &*receiver,
                    "a tool must be a free function: `self` parameters are not supported; move the tool out of the `impl` block and pass state with `#[ctx] name: State<T>`",
                ),
                FnArg::Typed(typed) => {
                    let attrs = std::mem::take(&mut typed.attrs);
                    if let Some(param) = read_param(cx, attrs, &mut typed.attrs, &typed.pat, &typed.ty) {
                        params.push(param);
                    }
                }
            }
        }
        let (output, output_span) = read_output(cx, &item.sig.output);
        ToolFn {
            params,
            output,
            output_span,
        }
    }
}

fn check_signature(cx: &Ctxt, item: &ItemFn) {
    let sig = &item.sig;
    if let Some(constness) = &sig.constness {
        cx.error_spanned_by(constness, "a tool cannot be a `const fn`: remove `const`");
    }
    if let Safety::Unsafe(unsafety) = &sig.safety {
        cx.error_spanned_by(unsafety, "a tool cannot be `unsafe`: a model cannot uphold safety requirements; make the function safe");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a tool cannot have an `extern` ABI: remove it");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(
            variadic,
            "a tool cannot be variadic: its parameters must be fixed to be described by a schema",
        );
    }
    let generics = &sig.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        cx.error_spanned_by(
            generics,
            "a tool cannot be generic: its schema must be known at compile time; use concrete types",
        );
    }
}

/// Sorts one parameter; `kept` receives the attributes that stay on the function.
fn read_param(
    cx: &Ctxt,
    attrs: Vec<Attribute>,
    kept: &mut Vec<Attribute>,
    pat: &Pat,
    ty: &Type,
) -> Option<Param> {
    let mut ctx_attr = None;
    let mut secret = None;
    let mut field_attrs = Vec::new();
    for attr in attrs {
        if attr.path().is_ident(SECRET) {
            if !matches!(attr.meta, syn::Meta::Path(_)) {
                cx.error_spanned_by(
                    &attr,
                    "`#[secret]` takes no arguments: write `#[secret] name: Type`",
                );
            }
            secret = Some(attr);
        } else if attr.path().is_ident(CTX) {
            if !matches!(attr.meta, syn::Meta::Path(_)) {
                cx.error_spanned_by(
                    &attr,
                    "`#[ctx]` takes no arguments: write `#[ctx] name: Type`",
                );
            }
            ctx_attr = Some(attr);
        } else if is_doc(&attr) || attr.path().is_ident("serde") || attr.path().is_ident("schemars")
        {
            field_attrs.push(attr);
        } else if attr.path().is_ident("cfg") {
            cx.error_spanned_by(
                &attr,
                "`#[cfg]` on a tool parameter is not supported: the schema must not change with it",
            );
        } else {
            kept.push(attr);
        }
    }
    let ident = match pat {
        Pat::Ident(binding) if binding.by_ref.is_none() && binding.subpat.is_none() => {
            binding.ident.clone()
        }
        other => {
            cx.error_spanned_by(
                other,
                "a tool parameter must be a plain name, like `day: Weekday`: each becomes a named property of the schema",
            );
            return None;
        }
    };
    check_type(cx, ty, ctx_attr.is_some());
    if ctx_attr.is_none() && is_toolgate_state(ty) {
        cx.error_spanned_by(
            ty,
            format!(
                "`{}` is application state, injected by the runtime, not read from the model's arguments: mark the parameter `#[ctx]`, as in `#[ctx] {ident}: State<..>`",
                quote::quote!(#ty).to_string().replace(' ', "")
            ),
        );
        return None;
    }
    if let (Some(_), Some(secret)) = (&ctx_attr, &secret) {
        cx.error_spanned_by(
            secret,
            "a `#[ctx]` parameter is never in the arguments, so it cannot be `#[secret]`",
        );
    }
    if ctx_attr.is_some() {
        if let Some(attr) = field_attrs.first() {
            let what = if is_doc(attr) {
                "a `///` doc comment"
            } else {
                "`#[serde]` or `#[schemars]` attributes"
            };
            cx.error_spanned_by(
                attr,
                format!("a `#[ctx]` parameter is injected, not shown to the model, so it cannot have {what}"),
            );
        }
        return Some(Param::Context(Context {
            ident,
            ty: ty.clone(),
        }));
    }
    Some(Param::Argument(Argument {
        ident,
        ty: ty.clone(),
        field_attrs,
        secret: secret.is_some(),
    }))
}

/// Whether a type is written as toolgate's `State<T>` (`State<T>`, `toolgate::State<T>`,
/// `toolgate::prelude::State<T>`): forgotten `#[ctx]` on it would otherwise surface as a
/// pile of serde and schemars errors. Only these spellings count, so a type of the user's
/// own named `State` is still an argument when written with its path (`crate::State<T>`).
fn is_toolgate_state(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    let generic = path
        .path
        .segments
        .last()
        .is_some_and(|last| matches!(last.arguments, PathArguments::AngleBracketed(_)));
    let spelled = matches!(
        names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["State"] | ["toolgate", "State"] | ["toolgate", "prelude", "State"]
    );
    path.qself.is_none() && generic && spelled
}

/// Reports references, `impl Trait` and other types that cannot come from JSON.
fn check_type(cx: &Ctxt, ty: &Type, is_context: bool) {
    struct Finder<'a> {
        cx: &'a Ctxt,
        is_context: bool,
        reported: bool,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            if self.reported {
                return;
            }
            self.reported = true;
            let owned = match &*reference.elem {
                Type::Path(path) if path.path.is_ident("str") => "`String`".to_owned(),
                Type::Slice(slice) => format!(
                    "`Vec<{}>`",
                    quote::quote!(#slice)
                        .to_string()
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .trim()
                ),
                elem => format!("`{}`", quote::quote!(#elem)),
            };
            let message = if self.is_context {
                format!(
                    "a `#[ctx]` parameter is passed by value: take {owned} instead of a reference"
                )
            } else {
                format!(
                    "a tool parameter cannot borrow: it is read from JSON into an owned value; use {owned} instead"
                )
            };
            self.cx.error_spanned_by(reference, message);
        }
        fn visit_type_impl_trait(&mut self, impl_trait: &'ast syn::TypeImplTrait) {
            if !self.reported {
                self.reported = true;
                self.cx.error_spanned_by(
                    impl_trait,
                    "`impl Trait` cannot be a tool parameter: the schema needs one concrete type",
                );
            }
        }
        fn visit_type_fn_ptr(&mut self, bare_fn: &'ast syn::TypeFnPtr) {
            if !self.reported {
                self.reported = true;
                self.cx.error_spanned_by(
                    bare_fn,
                    "a function pointer cannot be a tool parameter: it cannot come from JSON",
                );
            }
        }
        fn visit_type(&mut self, ty: &'ast Type) {
            visit::visit_type(self, ty);
        }
    }
    let mut finder = Finder {
        cx,
        is_context,
        reported: false,
    };
    finder.visit_type(ty);
}

fn read_output(cx: &Ctxt, output: &ReturnType) -> (Output, Span) {
    let ty = match output {
        ReturnType::Default => return (Output::Plain(syn::parse_quote!(())), Span::call_site()),
        ReturnType::Type(_, ty) => ty,
    };
    let span = syn::spanned::Spanned::span(&**ty);
    if let Some(impl_trait) = find_impl_trait(ty) {
        cx.error_spanned_by(
            impl_trait,
            "a tool must return a concrete type, not `impl Trait`: the runtime serializes it and may publish its schema",
        );
        return (Output::Plain(syn::parse_quote!(())), span);
    }
    if let Type::Path(path) = &**ty
        && let Some(last) = path.path.segments.last()
        && last.ident == "Result"
        && let PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(GenericArgument::Type(ok)) = args.args.first()
    {
        return (Output::Result { ok: ok.clone() }, span);
    }
    (Output::Plain((**ty).clone()), span)
}

/// The first `impl Trait` anywhere in a type, e.g. in `Result<impl Serialize, E>`.
fn find_impl_trait(ty: &Type) -> Option<&syn::TypeImplTrait> {
    struct Finder<'ast>(Option<&'ast syn::TypeImplTrait>);
    impl<'ast> Visit<'ast> for Finder<'ast> {
        fn visit_type_impl_trait(&mut self, impl_trait: &'ast syn::TypeImplTrait) {
            self.0.get_or_insert(impl_trait);
        }
    }
    let mut finder = Finder(None);
    finder.visit_type(ty);
    finder.0
}
