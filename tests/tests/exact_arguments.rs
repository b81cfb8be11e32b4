//! Arguments read straight into a tool's parameter types (where its schema is proven to say
//! no more than they do) give exactly what the checked path gives: the same results, the
//! same errors, the same audit records, the same arguments shown to the policy. Each case
//! runs through two registries, one where the direct path is open and one where each call
//! is recorded before it runs (so every call is parsed to JSON and checked against the
//! schema first).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate::ToolArguments;
use toolgate::audit::AuditMode;
use toolgate::prelude::*;
use toolgate::rate_limits::RateLimit;
use toolgate::{FromContext, ToolContext};
use toolgate_tests::RememberingPolicy;

/// Numbers at every width (a float among them: read the checked way, see below).
#[tool(permission = "public")]
fn exact_numbers(small: u8, count: u32, big: i64, flag: bool) -> Value {
    json!([small, count, big, flag])
}

/// The same with a float: `-0.0` is read as `0.0` on the checked path, so floats take it.
#[tool(permission = "public")]
fn with_float(small: u8, ratio: f64) -> Value {
    json!([small, ratio])
}

/// Text, lists and optionals.
#[tool(permission = "public")]
fn exact_text(
    /// Who.
    name: String,
    tags: Vec<String>,
    limit: Option<u16>,
    grid: Vec<Vec<i32>>,
    maybe: Option<Vec<Option<i8>>>,
) -> Value {
    json!({"name": name, "tags": tags, "limit": limit, "grid": grid, "maybe": maybe})
}

/// A schema stricter than the types: never read directly.
#[tool(permission = "public")]
fn constrained(
    #[schemars(range(min = 1, max = 10))] level: u8,
    #[schemars(length(max = 3))] code: String,
) -> String {
    format!("{code}{level}")
}

/// A key serde renames: never read directly.
#[tool(permission = "public")]
fn renamed(#[serde(rename = "k")] key: String) -> String {
    key
}

/// A day: a unit enum, read by name (an alias the schema does not list).
#[derive(Debug, Clone, Copy, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Day {
    Monday,
    Tuesday,
    #[serde(alias = "sat")]
    Saturday,
}

/// Documented variants (the schema lists them with `oneOf`), and a catch-all variant serde
/// fills with any other name.
#[derive(Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
    /// Any other.
    #[serde(other)]
    Other,
}

/// Enums, required and optional, beside an optional string.
#[tool(permission = "public")]
fn named(day: Day, unit: Option<Unit>, note: Option<String>) -> Value {
    json!({"day": day, "unit": unit, "note": note})
}

/// Counts each time a tool's context is taken apart for it.
static CONTEXTS_TAKEN: AtomicUsize = AtomicUsize::new(0);

/// A context part with a side effect, to tell when it is taken.
struct Counted;

impl FromContext for Counted {
    fn from_context(_context: &ToolContext) -> Result<Self, ToolError> {
        CONTEXTS_TAKEN.fetch_add(1, Ordering::SeqCst);
        Ok(Counted)
    }
}

/// An exact tool that takes part of its context (async).
#[tool(permission = "public")]
async fn counted_async(n: u8, #[ctx] _counted: Counted) -> u8 {
    n
}

/// The same, a sync function (it runs on the blocking pool).
#[tool(permission = "public")]
fn counted_sync(n: u8, #[ctx] _counted: Counted) -> u8 {
    n
}

struct Pair {
    direct: Registry,
    checked: Registry,
    direct_policy: RememberingPolicy,
    checked_policy: RememberingPolicy,
}

fn pair() -> Pair {
    let build = |policy: RememberingPolicy, mode: AuditMode| {
        Registry::builder()
            .roles(["public"])
            .filter_linked(|tool| {
                [
                    "exact_numbers",
                    "with_float",
                    "exact_text",
                    "constrained",
                    "renamed",
                    "named",
                ]
                .contains(&tool.name.as_str())
            })
            .policy(policy)
            .audit_mode(mode)
            .build()
            .unwrap()
    };
    let (direct_policy, checked_policy) = Default::default();
    Pair {
        direct: build(
            RememberingPolicy::clone(&direct_policy),
            AuditMode::AfterCall,
        ),
        checked: build(
            RememberingPolicy::clone(&checked_policy),
            AuditMode::BeforeRun,
        ),
        direct_policy,
        checked_policy,
    }
}

/// The outcome and the audit record of one call, in comparable form.
async fn observe(registry: &Registry, tool: &str, arguments: ToolArguments) -> (String, Value) {
    let caller = Caller::new("tester", "public");
    let outcome = registry
        .call(&caller, ToolCall::new("c1", tool, arguments))
        .await;
    let record = registry.history("tester", 1).await.unwrap().remove(0);
    let shown = format!("{:?}", outcome.result);
    let kept = json!({
        "arguments": record.arguments,
        "decision": record.decision,
        "outcome": record.outcome,
        "tool": record.tool,
        "call_id": record.call_id,
    });
    (shown, kept)
}

/// Runs one case through both registries, as text and as a value, and compares.
async fn same_both_ways(pair: &Pair, tool: &str, text: &str) {
    let as_text = |text: &str| ToolArguments::Text(text.to_owned());
    let direct = observe(&pair.direct, tool, as_text(text)).await;
    let checked = observe(&pair.checked, tool, as_text(text)).await;
    assert_eq!(direct, checked, "{tool} with {text}");
    let shown = |policy: &RememberingPolicy| std::mem::take(&mut *policy.seen.lock().unwrap());
    // The policy reads the arguments as the checked path would have made them.
    assert_eq!(
        shown(&pair.direct_policy),
        shown(&pair.checked_policy),
        "{tool} with {text}: what the policy was shown"
    );
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let direct = observe(&pair.direct, tool, ToolArguments::Value(value.clone())).await;
        let checked = observe(&pair.checked, tool, ToolArguments::Value(value)).await;
        assert_eq!(direct, checked, "{tool} with the value of {text}");
    }
}

const NUMBERS: [&str; 19] = [
    r#"{"small": 1, "count": 2, "big": 3, "flag": true}"#,
    r#"{"small": 255, "count": 4294967295, "big": -9223372036854775808, "flag": false}"#,
    r#"{"small": 256, "count": 1, "big": 1, "flag": true}"#,
    r#"{"small": -1, "count": 1, "big": 1, "flag": true}"#,
    r#"{"small": 1, "count": 4294967296, "big": 1, "flag": true}"#,
    r#"{"small": 1, "count": 1, "big": 9223372036854775808, "flag": true}"#,
    r#"{"small": 1.0, "count": 2.0, "big": 3.0, "flag": true}"#,
    r#"{"small": 1.5, "count": 1, "big": 1, "flag": true}"#,
    r#"{"small": 1, "count": 1, "big": 1, "flag": true}"#,
    r#"{"small": 1, "count": 1, "big": 1, "flag": 1}"#,
    r#"{"small": 1, "count": 1, "big": 1}"#,
    r#"{"small": 1, "count": 1, "big": 1, "flag": true, "extra": 0}"#,
    r#"{"small": 1, "small": 2, "count": 1, "big": 1, "flag": true}"#,
    r#"{"small": null, "count": 1, "big": 1, "flag": true}"#,
    r#"  {"flag":true,"big":0,"count":0,"small":0}  "#,
    r#"{"small": 1e2, "count": 1, "big": 1, "flag": true}"#,
    r#"[1, 2, 3]"#,
    r#"[1, 2, 3, true]"#,
    r#"{"small": 1, "count": 1, "big": 1, "flag": true"#,
];

const TEXTS: [&str; 16] = [
    r#"{"name": "Rex", "tags": ["a", "b"], "grid": [[1, 2], []]}"#,
    r#"{"name": "R\u00e9x \"q\"", "tags": [], "limit": null, "grid": [], "maybe": null}"#,
    r#"{"name": "Rex", "tags": [], "limit": 65535, "grid": [[-2147483648]], "maybe": [1, null, -128]}"#,
    r#"{"name": "Rex", "tags": [], "limit": 65536, "grid": []}"#,
    r#"{"name": "Rex", "tags": [1], "grid": []}"#,
    r#"{"name": "Rex", "tags": null, "grid": []}"#,
    r#"{"name": "Rex", "tags": [], "grid": [[1.0]]}"#,
    r#"{"name": "Rex", "tags": [], "grid": [1]}"#,
    r#"{"name": "Rex", "tags": [], "grid": [], "maybe": [128]}"#,
    r#"{"name": "Rex", "tags": [], "grid": [], "maybe": [[1]]}"#,
    r#"{"name": 7, "tags": [], "grid": []}"#,
    r#"{"tags": [], "grid": []}"#,
    r#""#,
    r#"null"#,
    r#"["Rex", [], null, [], null]"#,
    r#"  ["Rex", ["a"], 1, [[1]], [null]]"#,
];

#[tokio::test]
async fn numbers_read_directly_match_the_checked_path() {
    let pair = pair();
    for text in NUMBERS {
        same_both_ways(&pair, "exact_numbers", text).await;
    }
    for ratio in ["-0.0", "2.0", "2", "1e300", "\"1\"", "null"] {
        let text = format!(r#"{{"small": 1, "ratio": {ratio}}}"#);
        same_both_ways(&pair, "with_float", &text).await;
    }
}

#[tokio::test]
async fn text_lists_and_optionals_read_directly_match_the_checked_path() {
    let pair = pair();
    for text in TEXTS {
        same_both_ways(&pair, "exact_text", text).await;
    }
}

const NAMED: [&str; 18] = [
    r#"{"day": "monday"}"#,
    r#"{"day": "saturday", "unit": "celsius", "note": "x"}"#,
    r#"{"day": "tuesday", "unit": null, "note": null}"#,
    r#"{"day": "mon\u0064ay", "unit": "fahrenheit"}"#,
    r#"{"day": "monday", "unit": "other"}"#,
    r#"{"day": "sat"}"#,
    r#"{"day": "Monday"}"#,
    r#"{"day": {"monday": null}}"#,
    r#"{"day": "monday", "unit": {"celsius": null}}"#,
    r#"{"day": "monday", "unit": "kelvin"}"#,
    r#"{"day": null}"#,
    r#"{"day": 1}"#,
    r#"{"day": ["monday"]}"#,
    r#"{"unit": "celsius"}"#,
    r#"{"day": "monday", "day": "tuesday"}"#,
    r#"{"day": "monday", "extra": 1}"#,
    r#"["monday"]"#,
    r#"["monday", "celsius", "x"]"#,
];

#[tokio::test]
async fn enums_read_by_name_match_the_checked_path() {
    let pair = pair();
    for text in NAMED {
        same_both_ways(&pair, "named", text).await;
    }
}

#[tokio::test]
async fn schemas_stricter_than_their_types_are_still_checked() {
    let pair = pair();
    for text in [
        r#"{"level": 5, "code": "ab"}"#,
        r#"{"level": 11, "code": "ab"}"#,
        r#"{"level": 0, "code": "ab"}"#,
        r#"{"level": 5, "code": "abcd"}"#,
    ] {
        same_both_ways(&pair, "constrained", text).await;
    }
    let caller = Caller::new("tester", "public");
    let outcome = pair
        .direct
        .call(
            &caller,
            ToolCall::new("c", "constrained", r#"{"level": 11, "code": "ab"}"#),
        )
        .await;
    let error = outcome.result.unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArguments);
    assert!(error.message.contains("level"), "{}", error.message);
    same_both_ways(&pair, "renamed", r#"{"k": "x"}"#).await;
    same_both_ways(&pair, "renamed", r#"{"key": "x"}"#).await;
}

#[tokio::test]
async fn the_direct_path_is_taken_only_where_it_is_proven() {
    let pair = pair();
    let caller = Caller::new("tester", "public");
    let cases = [
        ("exact_numbers", NUMBERS[0], true),
        ("exact_text", TEXTS[0], true),
        ("named", NAMED[1], true),
        ("constrained", r#"{"level": 5, "code": "ab"}"#, false),
        ("renamed", r#"{"k": "x"}"#, false),
        ("with_float", r#"{"small": 1, "ratio": 0.5}"#, false),
    ];
    for (tool, text, direct) in cases {
        assert_eq!(
            pair.direct.__reads_straight_into_parameters(tool),
            direct,
            "{tool}"
        );
        assert!(
            !pair.checked.__reads_straight_into_parameters(tool),
            "{tool}"
        );
        pair.direct_policy.seen.lock().unwrap().clear();
        let outcome = pair
            .direct
            .call(&caller, ToolCall::new("c", tool, text))
            .await;
        assert!(outcome.result.is_ok(), "{tool}: {:?}", outcome.result);
        let seen = pair.direct_policy.seen.lock().unwrap().clone();
        // Read the direct way or not, the policy is shown the arguments it asks for.
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(seen, vec![expected], "{tool}");
    }
}

/// Values at the edges of what the parameter types and the schema accept.
fn edge_value() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(255)),
        Just(json!(256)),
        Just(json!(65535)),
        Just(json!(65536)),
        Just(json!(4294967295u64)),
        Just(json!(4294967296u64)),
        Just(json!(i64::MIN)),
        Just(json!(u64::MAX)),
        Just(json!(1.0)),
        Just(json!(-2.5)),
        Just(json!(1e300)),
        Just(json!(null)),
        Just(json!(true)),
        ".{0,6}".prop_map(Value::String),
    ];
    scalar.prop_recursive(3, 12, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(Value::Array)
    })
}

fn edge_object(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(keys), edge_value()), 0..7).prop_map(|pairs| {
        Value::Object(
            pairs
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect(),
        )
    })
}

/// Objects of the `named` tool's keys: names listed, aliased, unlisted, in map form, or edge
/// values.
fn named_object() -> impl Strategy<Value = Value> {
    let names = prop::sample::select(vec![
        "monday",
        "tuesday",
        "saturday",
        "sat",
        "Monday",
        "celsius",
        "fahrenheit",
        "other",
        "kelvin",
        "",
    ]);
    let value = prop_oneof![
        names.clone().prop_map(|name| json!(name)),
        names.prop_map(|name| json!({ name: null })),
        edge_value(),
    ];
    let keys = prop::sample::select(&["day", "unit", "note", "other"][..]);
    prop::collection::vec((keys, value), 0..5).prop_map(|pairs| {
        Value::Object(
            pairs
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect(),
        )
    })
}

/// Arguments given by position, as an array (serde reads a struct from one, its fields in
/// order; the schema accepts an object alone): values a tool's parameters take, often, so
/// that many arrays would read.
fn positional(
    likely: Vec<Value>,
    lengths: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = Value> {
    let value = prop_oneof![3 => prop::sample::select(likely), 1 => edge_value()];
    prop::collection::vec(value, lengths).prop_map(Value::Array)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_arguments_give_the_same_outcome_and_record_both_ways(
        numbers in edge_object(&["small", "count", "big", "flag", "other"]),
        text in edge_object(&["name", "tags", "limit", "grid", "maybe", "other"]),
        named in named_object(),
        numbers_in_order in positional(vec![json!(1), json!(true)], 3..=5),
        text_in_order in positional(vec![json!("Rex"), json!([]), json!(null)], 3..=6),
        named_in_order in positional(vec![json!("monday"), json!("celsius"), json!(null)], 1..=4),
    ) {
        // With timers: a synchronous tool still running when first polled waits under the
        // registry's default timeout.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let pair = pair();
            same_both_ways(&pair, "exact_numbers", &numbers.to_string()).await;
            same_both_ways(&pair, "exact_text", &text.to_string()).await;
            same_both_ways(&pair, "named", &named.to_string()).await;
            same_both_ways(&pair, "exact_numbers", &numbers_in_order.to_string()).await;
            same_both_ways(&pair, "exact_text", &text_in_order.to_string()).await;
            same_both_ways(&pair, "named", &named_in_order.to_string()).await;
        });
    }
}

/// A call refused after its arguments were read (here by a rate limit) never takes its
/// context apart: a `FromContext` with side effects runs only for a call that runs.
#[tokio::test]
async fn a_refused_call_does_not_take_its_context() {
    let registry = Registry::builder()
        .roles(["public"])
        .filter_linked(|tool| ["counted_async", "counted_sync"].contains(&tool.name.as_str()))
        .rate_limit_per_caller(RateLimit::new(2, Duration::from_secs(3600)))
        .build()
        .unwrap();
    let caller = Caller::new("tester", "public");
    let mut results = Vec::new();
    for tool in [
        "counted_async",
        "counted_sync",
        "counted_async",
        "counted_sync",
    ] {
        let outcome = registry
            .call(&caller, ToolCall::new("c", tool, r#"{"n": 7}"#))
            .await;
        results.push(outcome.result.map_err(|error| error.code));
    }
    assert_eq!(results[..2], [Ok(json!(7)), Ok(json!(7))]);
    assert!(
        results[2..]
            .iter()
            .all(|result| result == &Err(ErrorCode::RateLimited)),
        "{results:?}"
    );
    assert_eq!(CONTEXTS_TAKEN.load(Ordering::SeqCst), 2);
}
