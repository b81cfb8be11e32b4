//! The compiler messages of `#[tool]` are part of the product. This crate holds its
//! compile-fail suite (`tests/ui/<area>/<mistake>.rs`, one mistake per file with its reviewed
//! `.stderr`) and its pass suite (`tests/pass/`), run by `tests/compile_suite.rs`.
//!
//! It has no code of its own: it exists so that trybuild's project depends on toolgate and
//! the crates the cases use, and nothing else.
