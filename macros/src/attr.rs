//! The keys of `#[tool(...)]`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Expr, ExprArray, ExprLit, Lit, LitStr, Token};

use crate::ctxt::Ctxt;
use crate::timeout::parse_timeout;

const NAME: &str = "name";
const DESCRIPTION: &str = "description";
const TITLE: &str = "title";
const PERMISSION: &str = "permission";
const GROUP: &str = "group";
const TAGS: &str = "tags";
const RISK: &str = "risk";
const TIMEOUT: &str = "timeout";
const READ_ONLY: &str = "read_only";
const DESTRUCTIVE: &str = "destructive";
const IDEMPOTENT: &str = "idempotent";
const OPEN_WORLD: &str = "open_world";
const UNTRUSTED: &str = "untrusted";
const MANUAL: &str = "manual";
const UI: &str = "ui";

const KEYS: &[&str] = &[
    NAME,
    DESCRIPTION,
    TITLE,
    PERMISSION,
    GROUP,
    TAGS,
    RISK,
    TIMEOUT,
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
    UNTRUSTED,
    MANUAL,
    UI,
];
/// How much harm a call could do, as `risk = "..."` says.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Risk {
    #[default]
    Low,
    Medium,
    High,
    Critical,
}

impl Risk {
    const ALL: [(&'static str, Risk); 4] = [
        ("low", Risk::Low),
        ("medium", Risk::Medium),
        ("high", Risk::High),
        ("critical", Risk::Critical),
    ];

    fn parse(text: &str) -> Option<Risk> {
        Risk::ALL
            .iter()
            .find(|(name, _)| *name == text)
            .map(|(_, risk)| *risk)
    }

    /// The variant of `toolgate::Risk` it stands for.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Risk::Low => "Low",
            Risk::Medium => "Medium",
            Risk::High => "High",
            Risk::Critical => "Critical",
        }
    }
}

/// A value and where it was written.
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) description: Option<Spanned<String>>,
    pub(crate) title: Option<String>,
    pub(crate) permission: Option<String>,
    pub(crate) group: Option<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) risk: Risk,
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) read_only: Option<Span>,
    pub(crate) destructive: Option<Span>,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    /// Its results carry text from outside: sent to a model as data.
    pub(crate) untrusted: bool,
    /// Not registered through `inventory`; the application registers it with a permission.
    pub(crate) manual: bool,
    /// The UI component that renders the result.
    pub(crate) ui: Option<String>,
    seen: Vec<String>,
    unknown_keys: bool,
    malformed: bool,
}

impl ToolAttrs {
    /// Parses the attribute's arguments, recording every mistake in `cx`.
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> ToolAttrs {
        let mut attrs = ToolAttrs::default();
        let parser = syn::meta::parser(|meta| {
            attrs.parse_key(cx, &meta)?;
            Ok(())
        });
        if let Err(error) = parser.parse2(args) {
            attrs.malformed = true;
            cx.syn_error(syn::Error::new(
                error.span(),
                format!(
                    "`#[tool]` takes `key = value` pairs and flags, e.g. `#[tool(permission = \"staff\", read_only)]`; the keys are: {}",
                    keys_listed()
                ),
            ));
        }
        if let (Some(read_only), Some(_)) = (attrs.read_only, attrs.destructive) {
            cx.syn_error(syn::Error::new(
                read_only,
                "a tool cannot be both `read_only` and `destructive`: a read-only tool changes nothing",
            ));
        }
        attrs
    }

    /// Whether a missing `permission` is worth its own error: not when the key was written
    /// (with a wrong value), misspelled, or the attribute could not be read.
    pub(crate) fn permission_truly_missing(&self) -> bool {
        !self.manual
            && self.permission.is_none()
            && !self
                .seen
                .iter()
                .any(|key| key == PERMISSION || key == MANUAL)
            && !self.unknown_keys
            && !self.malformed
    }

    fn parse_key(&mut self, cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<()> {
        let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
            cx.syn_error(meta.error(format!(
                "unknown key in `#[tool]`; expected one of: {}",
                keys_listed()
            )));
            return skip_value(meta);
        };
        if !KEYS.contains(&key.as_str()) {
            let hint = match closest_key(&key) {
                Some(close) => format!("did you mean `{close}`? "),
                None => String::new(),
            };
            cx.syn_error(meta.error(format!(
                "unknown key `{key}` in `#[tool]`; {hint}expected one of: {}",
                keys_listed()
            )));
            self.unknown_keys = true;
            return skip_value(meta);
        }
        if self.seen.contains(&key) {
            cx.syn_error(meta.error(format!("duplicate key `{key}` in `#[tool]`")));
            return skip_value(meta);
        }
        self.seen.push(key.clone());
        match key.as_str() {
            NAME => {
                if let Some(text) = string_value(cx, meta, &key)? {
                    self.name = Some(Spanned {
                        value: text.value(),
                        span: text.span(),
                    });
                }
            }
            DESCRIPTION => {
                if let Some(text) = string_value(cx, meta, &key)? {
                    if text.value().trim().is_empty() {
                        cx.error_spanned_by(
                            &text,
                            "`description` is empty: say what the tool does, for the model",
                        );
                    }
                    self.description = Some(Spanned {
                        value: text.value(),
                        span: text.span(),
                    });
                }
            }
            TITLE => self.title = string_value(cx, meta, &key)?.map(|text| text.value()),
            PERMISSION => {
                if let Some(text) = string_value(cx, meta, &key)? {
                    if text.value().trim().is_empty() {
                        cx.error_spanned_by(
                            &text,
                            "`permission` is empty: name the lowest role that may use the tool",
                        );
                    }
                    self.permission = Some(text.value());
                }
            }
            GROUP => self.group = string_value(cx, meta, &key)?.map(|text| text.value()),
            TAGS => self.tags = tags_value(cx, meta)?,
            RISK => {
                if let Some(text) = string_value(cx, meta, &key)? {
                    match Risk::parse(&text.value()) {
                        Some(risk) => self.risk = risk,
                        None => cx.error_spanned_by(
                            &text,
                            format!("unknown risk \"{}\"; expected one of: \"low\", \"medium\", \"high\", \"critical\"", text.value()),
                        ),
                    }
                }
            }
            TIMEOUT => {
                if let Some(text) = string_value(cx, meta, &key)? {
                    match parse_timeout(&text.value()) {
                        Ok(millis) => self.timeout_ms = Some(millis),
                        Err(message) => cx.error_spanned_by(&text, message),
                    }
                }
            }
            READ_ONLY => self.read_only = flag(cx, meta, &key)?,
            DESTRUCTIVE => self.destructive = flag(cx, meta, &key)?,
            IDEMPOTENT => self.idempotent = flag(cx, meta, &key)?.is_some(),
            OPEN_WORLD => self.open_world = flag(cx, meta, &key)?.is_some(),
            UNTRUSTED => self.untrusted = flag(cx, meta, &key)?.is_some(),
            MANUAL => self.manual = flag(cx, meta, &key)?.is_some(),
            UI => {
                if let Some(text) = string_value(cx, meta, &key)? {
                    if is_valid_ui_name(&text.value()) {
                        self.ui = Some(text.value());
                    } else {
                        cx.error_spanned_by(
                            &text,
                            format!(
                                "invalid UI component name {:?}: use 1 to 64 ASCII letters, digits, `_` or `-`, starting with a letter, e.g. `ui = \"pet_card\"`",
                                text.value()
                            ),
                        );
                    }
                }
            }
            _ => unreachable!("every key in KEYS is handled"),
        }
        Ok(())
    }
}

/// The valid key nearest to a misspelled one, if it is close.
fn closest_key(key: &str) -> Option<&'static str> {
    KEYS.iter()
        .map(|candidate| (edit_distance(key, candidate), *candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance between two short ASCII-ish strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

fn keys_listed() -> String {
    KEYS.iter()
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Consumes `= value` or `(...)` after a key already reported as wrong.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

/// `key = "text"`; a wrong kind of value is reported and yields `None`.
fn string_value(cx: &Ctxt, meta: &ParseNestedMeta, key: &str) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(Token![=]) {
        cx.syn_error(meta.error(format!(
            "`{key}` needs a value: `{key} = \"{}\"`",
            example(key)
        )));
        skip_value(meta)?;
        return Ok(None);
    }
    let value: Expr = meta.value()?.parse()?;
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Ok(Some(text)),
        other => {
            cx.error_spanned_by(
                &other,
                format!(
                    "`{key}` must be a string literal, e.g. `{key} = \"{}\"`",
                    example(key)
                ),
            );
            Ok(None)
        }
    }
}

fn example(key: &str) -> &'static str {
    match key {
        PERMISSION => "staff",
        RISK => "high",
        TIMEOUT => "5s",
        GROUP => "files",
        NAME => "get_weather",
        UI => "pet_card",
        _ => "...",
    }
}

/// `tags = ["a", "b"]`.
fn tags_value(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Vec<String>> {
    if !meta.input.peek(Token![=]) {
        cx.syn_error(meta.error("`tags` needs a value: `tags = [\"billing\", \"email\"]`"));
        skip_value(meta)?;
        return Ok(Vec::new());
    }
    let value: Expr = meta.value()?.parse()?;
    let Expr::Array(ExprArray { elems, .. }) = value else {
        cx.error_spanned_by(
            &value,
            "`tags` must be a list of string literals, e.g. `tags = [\"billing\", \"email\"]`",
        );
        return Ok(Vec::new());
    };
    let mut tags = Vec::new();
    for element in elems {
        match element {
            Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) => tags.push(text.value()),
            other => cx.error_spanned_by(&other, "each tag must be a string literal"),
        }
    }
    Ok(tags)
}

/// A flag such as `read_only`, which takes no value.
fn flag(cx: &Ctxt, meta: &ParseNestedMeta, key: &str) -> syn::Result<Option<Span>> {
    let span = meta.path.get_ident().map(|ident| ident.span());
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.syn_error(meta.error(format!(
            "`{key}` is a flag and takes no value: write just `{key}`"
        )));
        skip_value(meta)?;
        return Ok(None);
    }
    Ok(span)
}

/// The rule of `toolgate::is_valid_ui_name`, checked at compile time.
fn is_valid_ui_name(name: &str) -> bool {
    name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
