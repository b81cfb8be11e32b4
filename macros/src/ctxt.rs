//! Collects every error of one expansion, so they are reported together. Like serde_derive's
//! `Ctxt`, it must be consumed: dropping it with errors unread is a bug in the macro, and
//! panics rather than losing them.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

pub(crate) struct Ctxt {
    /// `None` once the errors were taken.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Default for Ctxt {
    fn default() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }
}

impl Ctxt {
    /// An error pointing at `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens>(&self, tokens: T, message: impl Display) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// An error from syn.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("errors are collected before they are taken")
            .push(error);
    }

    /// Every collected error as `compile_error!` invocations, or `None` when there is none.
    pub(crate) fn check(self) -> Option<TokenStream> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        (!errors.is_empty()).then(|| errors.iter().map(syn::Error::to_compile_error).collect())
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("the macro forgot to check its collected errors");
        }
    }
}
