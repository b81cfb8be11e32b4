//! Property-based fuzzing of everything that reads what a model or a client sends: the
//! argument path (text and bytes → limits → JSON → null-stripping → integers → validation →
//! deserialization), the free-text call parser and every provider's call parser. Every input
//! must be answered with an outcome (or a parse error), without a panic, a hang or an
//! unbounded message.
//!
//! In the suite each target runs a fixed number of cases (`PROPTEST_CASES`, default 256).
//! For a long run: `TOOLGATE_FUZZ_SECONDS=600 cargo test -p toolgate-tests --test fuzz --
//! --ignored --nocapture` runs each target for that many seconds and prints its case count.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};
use toolgate::formats::{anthropic, calls_from_text, gemini, mcp, openai};
use toolgate::prelude::*;
use toolgate::{ArgumentLimits, ToolArguments};

/// Book a slot.
#[tool(permission = "user", read_only)]
fn book(
    /// Day.
    #[schemars(length(min = 1, max = 20))]
    day: String,
    /// Hour.
    hour: u8,
    /// Optional note.
    note: Option<String>,
    /// Tags.
    #[serde(default)]
    tags: Vec<String>,
    /// A secret.
    #[secret]
    pin: Option<u32>,
) -> String {
    format!("{day} {hour} {note:?} {tags:?} {}", pin.is_some())
}

/// No arguments.
#[tool(permission = "user", read_only)]
fn ping() -> &'static str {
    "pong"
}

/// Largest message an outcome may carry, whatever the input.
const MAX_MESSAGE: usize = 16 * 1024;

fn registry() -> Registry {
    Registry::builder()
        .roles(["user"])
        .argument_limits(ArgumentLimits {
            max_bytes: 64 * 1024,
            max_depth: 16,
        })
        .build()
        .unwrap()
}

/// Arbitrary JSON, nested, with keys and strings that look like the real ones sometimes.
fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("day".to_owned()),
        Just("hour".to_owned()),
        Just("note".to_owned()),
        Just("tags".to_owned()),
        Just("pin".to_owned()),
        Just("name".to_owned()),
        Just("arguments".to_owned()),
        ".{0,12}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        (0u8..=255).prop_map(|n| json!(f64::from(n))),
        ".{0,30}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Argument text: arbitrary strings, JSON made text, and JSON cut or spliced.
fn argument_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,200}",
        json_value().prop_map(|value| value.to_string()),
        (json_value(), any::<prop::sample::Index>()).prop_map(|(value, cut)| {
            let text = value.to_string();
            let mut end = cut.index(text.len() + 1);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_owned()
        }),
        (1usize..200).prop_map(|depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth))),
    ]
}

fn check_outcome(outcome: &ToolOutcome) -> Result<(), TestCaseError> {
    if let Err(error) = &outcome.result {
        let size = error.message.len() + error.details.as_ref().map_or(0, |d| d.to_string().len());
        prop_assert!(
            size < MAX_MESSAGE,
            "message of {size} bytes: {}",
            error.message
        );
    }
    Ok(())
}

/// Runs one case on a fresh current-thread runtime, failing on a hang.
fn answer(registry: &Registry, call: ToolCall) -> Result<ToolOutcome, TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(async {
            tokio::time::timeout(
                Duration::from_secs(10),
                registry.call(&Caller::new("fuzz", "user"), call),
            )
            .await
        })
        .map_err(|_| TestCaseError::fail("the call hung"))
}

/// Generates one input and runs the test on it, shrinking a failure to its smallest form.
fn one_case<S: Strategy>(
    runner: &mut TestRunner,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) -> Result<(), String> {
    let tree = strategy
        .new_tree(runner)
        .map_err(|error| error.to_string())?;
    runner
        .run_one(tree, test)
        .map(drop)
        .map_err(|error| error.to_string())
}

fn target_argument_path(runner: &mut TestRunner, registry: &Registry) -> Result<(), String> {
    let strategy = (
        prop_oneof![
            Just("book".to_owned()),
            Just("ping".to_owned()),
            Just("nope".to_owned()),
            ".{0,70}"
        ],
        prop_oneof![
            argument_text().prop_map(ToolArguments::Text),
            argument_text().prop_map(|text| ToolArguments::Bytes(text.into_bytes())),
            prop::collection::vec(any::<u8>(), 0..300).prop_map(ToolArguments::Bytes),
            json_value().prop_map(ToolArguments::Value),
        ],
    );
    one_case(runner, strategy, |(name, arguments)| {
        let outcome = answer(registry, ToolCall::new("f", name, arguments))?;
        check_outcome(&outcome)
    })
}

fn target_free_text(runner: &mut TestRunner, registry: &Registry) -> Result<(), String> {
    let strategy = prop_oneof![
        ".{0,300}",
        json_value().prop_map(|value| format!("Sure! ```json\n{value}\n``` done")),
        json_value().prop_map(|value| format!("{{\"name\": \"book\", \"arguments\": {value}}}")),
    ];
    one_case(runner, strategy, |text| {
        if let Ok(calls) = calls_from_text(&text) {
            for call in calls {
                check_outcome(&answer(registry, call)?)?;
            }
        }
        Ok(())
    })
}

fn target_provider_parsers(runner: &mut TestRunner, registry: &Registry) -> Result<(), String> {
    let call_like = json_value().prop_map(|arguments| {
        json!({
            "tool_calls": [{"id": "1", "type": "function", "function": {"name": "book", "arguments": arguments.to_string()}}],
            "output": [{"type": "function_call", "call_id": "1", "name": "book", "arguments": arguments.to_string()}],
            "content": [{"type": "tool_use", "id": "1", "name": "book", "input": arguments}],
            "candidates": [{"content": {"parts": [{"functionCall": {"name": "book", "args": arguments}}]}}],
            "name": "book",
            "arguments": arguments,
        })
    });
    let strategy = prop_oneof![json_value(), call_like];
    one_case(runner, strategy, |message| {
        let parsed = [
            openai::calls_from_chat(&message),
            openai::calls_from_responses(&message),
            anthropic::calls_from_message(&message),
            gemini::calls_from_response(&message),
            mcp::call_from_params("1", &message).map(|call| vec![call]),
        ];
        for calls in parsed.into_iter().flatten() {
            for call in calls {
                check_outcome(&answer(registry, call)?)?;
            }
        }
        Ok(())
    })
}

type Target = fn(&mut TestRunner, &Registry) -> Result<(), String>;

const TARGETS: [(&str, Target); 3] = [
    ("argument path", target_argument_path),
    ("free-text parser", target_free_text),
    ("provider parsers", target_provider_parsers),
];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(256)
}

fn run_cases(target: Target) {
    let registry = registry();
    let mut runner = TestRunner::new(Config::default());
    for _ in 0..cases() {
        if let Err(failure) = target(&mut runner, &registry) {
            panic!("{failure}");
        }
    }
}

#[test]
fn fuzz_the_argument_path() {
    run_cases(target_argument_path);
}

#[test]
fn fuzz_the_free_text_parser() {
    run_cases(target_free_text);
}

#[test]
fn fuzz_the_provider_parsers() {
    run_cases(target_provider_parsers);
}

/// Each target for `TOOLGATE_FUZZ_SECONDS` (default 600), printing how many cases ran.
#[test]
#[ignore = "a long run: TOOLGATE_FUZZ_SECONDS=600 cargo test -p toolgate-tests --test fuzz -- --ignored --nocapture"]
fn fuzz_each_target_for_a_while() {
    let seconds: u64 = std::env::var("TOOLGATE_FUZZ_SECONDS")
        .ok()
        .and_then(|seconds| seconds.parse().ok())
        .unwrap_or(600);
    let registry = registry();
    for (name, target) in TARGETS {
        let mut runner = TestRunner::new(Config::default());
        let started = Instant::now();
        let mut count = 0u64;
        while started.elapsed() < Duration::from_secs(seconds) {
            if let Err(failure) = target(&mut runner, &registry) {
                panic!("{name}: {failure}");
            }
            count += 1;
        }
        println!("{name}: {count} cases in {seconds} s, every one answered");
    }
}
