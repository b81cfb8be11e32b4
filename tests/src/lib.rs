//! Cross-crate tests of toolgate: the compile-fail and pass suites (`tests/ui`,
//! `tests/pass`), the integration tests in `tests/`, and the README's examples, which are
//! compiled and run as this crate's doc tests.
#![doc = include_str!("../../README.md")]
