//! Text of `///` doc comments.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The doc comment of `attrs` as one text: one leading space per line removed, lines
/// joined, surrounding blank lines dropped. `None` when there is no doc comment text.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(pair) if pair.path.is_ident("doc") => match &pair.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(text),
                    ..
                }) => Some(text.value()),
                _ => None,
            },
            _ => None,
        })
        // `split`, not `lines`: an empty `///` line is a paragraph break and must stay.
        .flat_map(|text| text.split('\n').map(str::to_owned).collect::<Vec<_>>())
        .map(|line| {
            line.strip_prefix(' ')
                .unwrap_or(&line)
                .trim_end()
                .to_owned()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

#[cfg(test)]
mod tests {
    use super::doc_text;

    #[test]
    fn lines_are_joined_and_trimmed() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// First line.
            ///
            ///   Indented detail.
            #[inline]
            /** Block. */
            fn f() {}
        };
        assert_eq!(
            doc_text(&item.attrs).unwrap(),
            "First line.\n\n  Indented detail.\nBlock."
        );
    }

    #[test]
    fn no_doc_is_none() {
        let item: syn::ItemFn = syn::parse_quote! { #[doc = "   "] fn f() {} };
        assert_eq!(doc_text(&item.attrs), None);
    }
}
