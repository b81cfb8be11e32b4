//! The official MCP conformance suite's server scenarios against the conformance example
//! (`src/conformance.rs`, the suite's fixture tools as a toolgate registry): once as a
//! 2026-07-28 server (stateless, per-request `_meta`) and once as a 2025-11-25 server (the
//! `initialize` handshake). Every scenario about tools, input requests, caching, the
//! stateless lifecycle, logging, progress and DNS rebinding passes; the ones below are
//! out of scope and only reported.

use std::collections::BTreeSet;

use toolgate_test_support::{ConformanceSuite, ScenarioResult};

#[path = "mcp/support.rs"]
#[allow(dead_code)] // each test uses part of it
mod support;
use support::start_fixtures;

/// Scenarios of features this server does not have, and why.
const OUT_OF_SCOPE: &[(&str, &str)] = &[
    (
        "resources-read-text",
        "toolgate serves tools; it has no resources",
    ),
    ("resources-read-binary", "no resources"),
    ("resources-templates-read", "no resources"),
    ("resources-subscribe", "no resources"),
    ("resources-unsubscribe", "no resources"),
    (
        "prompts-get-simple",
        "toolgate serves tools; it has no prompts",
    ),
    ("prompts-get-with-args", "no prompts"),
    ("prompts-get-embedded-resource", "no prompts"),
    ("prompts-get-with-image", "no prompts"),
    (
        "input-required-result-non-tool-request",
        "asks through prompts/get: no prompts",
    ),
    (
        "http-custom-header-server-validation",
        "pending in the suite: SEP-2243 custom headers, not scored",
    ),
    (
        "tasks-lifecycle",
        "the tasks extension (optional, not scored)",
    ),
    ("tasks-capability-negotiation", "tasks extension"),
    ("tasks-wire-fields", "tasks extension"),
    ("tasks-request-state-removal", "tasks extension"),
    ("tasks-mrtr-input", "tasks extension"),
    ("tasks-request-headers", "tasks extension"),
    ("tasks-dispatch-and-envelope", "tasks extension"),
    ("tasks-status-notifications", "tasks extension"),
    ("tasks-required-task-error", "tasks extension"),
    ("tasks-mrtr-composition", "tasks extension"),
];

/// Scenarios the runs must include (and pass): the list, by name.
const REQUIRED: &[&str] = &[
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-with-logging",
    "tools-call-sampling",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "caching",
    "server-stateless",
    "dns-rebinding-protection",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
];

fn check(revision: &str, output: &str, results: &[ScenarioResult]) -> BTreeSet<String> {
    assert!(
        results.len() >= 20,
        "the suite ran too few scenarios for {revision}:\n{output}"
    );
    let out_of_scope: BTreeSet<&str> = OUT_OF_SCOPE.iter().map(|(name, _)| *name).collect();
    let mut failed = Vec::new();
    for result in results {
        eprintln!("[{revision}] {}", result.line);
        if !result.passed && !out_of_scope.contains(result.scenario.as_str()) {
            failed.push(result.line.clone());
        }
    }
    assert!(
        failed.is_empty(),
        "in-scope scenarios failed for {revision}: {failed:#?}\n{output}"
    );
    results
        .iter()
        .map(|result| result.scenario.clone())
        .collect()
}

#[test]
fn the_official_suite_passes_every_tools_scenario() {
    let suite = ConformanceSuite::installed(env!("CARGO_TARGET_TMPDIR").as_ref());
    let (_fixtures, url) = start_fixtures();
    let mut ran = BTreeSet::new();
    for revision in ["2026-07-28", "2025-11-25"] {
        let (output, results) = suite.run_server(&url, &["--requirements", revision]);
        ran.extend(check(revision, &output, &results));
    }
    let missing: Vec<&&str> = REQUIRED
        .iter()
        .filter(|name| !ran.contains(**name))
        .collect();
    assert!(missing.is_empty(), "the suite did not run {missing:?}");
}
