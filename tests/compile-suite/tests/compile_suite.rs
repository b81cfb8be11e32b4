//! The compiler messages of `#[tool]` are part of the product: every misuse has a case in
//! `ui/<area>/<mistake>.rs` with its reviewed `.stderr`, and every supported form compiles
//! and runs in `pass/`. Refresh with `TRYBUILD=overwrite`, then read the diff.

#[test]
fn compile_fail_and_pass() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*/*.rs");
    cases.pass("tests/pass/*.rs");
}
