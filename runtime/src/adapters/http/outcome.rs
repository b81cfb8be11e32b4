//! Outcomes on the wire: what `POST /tools/call` answers. One outcome's JSON is written
//! with its keys as they are: the keys are constants, and serde would escape each of them
//! again on every response (about a tenth of what the endpoint adds to a bare handler).
//! The result, error and `ui` go through serde as ever, or, for a result that came as its
//! value's text (see [`Answer`]), as that text; the call's duration is written from its
//! nanoseconds where its text is their plain decimal. The text is exactly
//! [`OutcomeBody`]'s serialization (tests hold the two together).

use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use smol_str::SmolStr;

use crate::call::ToolOutcome;
use crate::error::ToolError;
use crate::output::Produced;
use crate::registry::Answer;
use crate::util::time::millis;

/// One outcome as JSON: `{"call_id", "tool", "ok", "result" | "error", "duration_ms", "ui"?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeBody {
    /// The call's id.
    pub call_id: SmolStr,
    /// The tool's name.
    pub tool: SmolStr,
    /// Whether the call succeeded.
    pub ok: bool,
    /// The result, on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// How long the call took.
    pub duration_ms: f64,
    /// The UI component that renders the result, if the tool names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui: Option<String>,
    /// `result` is a list of content blocks (images, audio, resources, text).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub content: bool,
}

impl From<ToolOutcome> for OutcomeBody {
    fn from(outcome: ToolOutcome) -> Self {
        let duration_ms = millis(outcome.duration);
        let (ok, result, error) = match outcome.result {
            Ok(value) => (true, Some(value), None),
            Err(error) => (false, None, Some(error)),
        };
        OutcomeBody {
            call_id: outcome.call_id,
            tool: outcome.tool,
            ok,
            result,
            error,
            duration_ms,
            ui: outcome.ui,
            content: outcome.is_content,
        }
    }
}

/// Room for a typical outcome's JSON: axum's `Json` starts at 128 bytes and grows.
const OUTCOME_CAPACITY: usize = 512;

/// One outcome as a JSON response, written into a buffer sized for it.
pub(crate) fn outcome_response(outcome: impl Into<Answer>) -> Response {
    let answer = outcome.into();
    let mut bytes = Vec::with_capacity(OUTCOME_CAPACITY);
    match write_outcome(&mut bytes, &answer) {
        Ok(()) => json_response(bytes),
        // axum's own answer to a body that cannot be written.
        Err(_) => Json(OutcomeBody::from(ToolOutcome::from(answer))).into_response(),
    }
}

/// A batch's outcomes as JSON: `{"outcomes": [...]}`, in the calls' order.
#[derive(Serialize)]
struct Outcomes {
    outcomes: Vec<OutcomeBody>,
}

/// A batch's outcomes as a JSON response (see [`Outcomes`]).
pub(crate) fn outcomes_response(outcomes: Vec<ToolOutcome>) -> Response {
    let answers: Vec<Answer> = outcomes.into_iter().map(Answer::from).collect();
    let mut bytes = Vec::with_capacity(OUTCOME_CAPACITY * answers.len().max(1));
    match write_outcomes(&mut bytes, &answers) {
        Ok(()) => json_response(bytes),
        Err(_) => {
            let outcomes = answers
                .into_iter()
                .map(|answer| OutcomeBody::from(ToolOutcome::from(answer)))
                .collect();
            Json(Outcomes { outcomes }).into_response()
        }
    }
}

/// `bytes` as a JSON response (its one header set directly: a list of headers is merged
/// into the response's one by one).
fn json_response(bytes: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(bytes));
    response.headers_mut().insert(CONTENT_TYPE, JSON);
    response
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// Appends `outcome` as compact JSON to `out`: the text of its [`OutcomeBody`], written
/// from the outcome itself.
fn write_outcome(out: &mut Vec<u8>, outcome: &Answer) -> serde_json::Result<()> {
    text_field(out, br#"{"call_id":""#, &outcome.call_id)?;
    text_field(out, br#","tool":""#, &outcome.tool)?;
    const OK: &[u8] = br#","ok":true,"result":"#;
    match &outcome.result {
        Ok(Produced::Value(result)) => field(out, OK, result)?,
        // The text of the result's value, which serde would write.
        Ok(Produced::Text(text)) => {
            out.extend_from_slice(OK);
            out.extend_from_slice(text);
        }
        Err(error) => field(out, br#","ok":false,"error":"#, error)?,
    }
    out.extend_from_slice(br#","duration_ms":"#);
    write_millis(out, outcome.duration)?;
    if let Some(ui) = &outcome.ui {
        field(out, br#","ui":"#, ui)?;
    }
    if outcome.is_content {
        out.extend_from_slice(br#","content":true"#);
    }
    out.push(b'}');
    Ok(())
}

/// Appends [`Outcomes`] of `outcomes` as compact JSON to `out`.
fn write_outcomes(out: &mut Vec<u8>, outcomes: &[Answer]) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"outcomes":["#);
    for (index, outcome) in outcomes.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_outcome(out, outcome)?;
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

/// Appends `key` (written as it is: a separator, a quoted name and a colon) and `value`.
fn field(out: &mut Vec<u8>, key: &[u8], value: &impl Serialize) -> serde_json::Result<()> {
    out.extend_from_slice(key);
    serde_json::to_writer(out, value)
}

/// Appends `key` (ending in the string's opening quote) and the string `text`: as it is,
/// where JSON escapes none of its characters (a tool's name never needs it, nor do most
/// call ids); else through serde. Inlined, so that the key, a constant, is copied as one.
#[inline(always)]
fn text_field(out: &mut Vec<u8>, key: &[u8], text: &str) -> serde_json::Result<()> {
    out.extend_from_slice(key);
    if escapes_any(text.as_bytes()) {
        // serde writes the string's quotes itself.
        out.pop();
        return serde_json::to_writer(out, text);
    }
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
    Ok(())
}

/// Whether JSON escapes any of `bytes`: quotes, backslashes and control characters (serde
/// nothing else). A short text is looked at byte by byte; a longer one with no early exit,
/// so that the compiler checks sixteen bytes at a time (which costs more than a short
/// text's whole look).
fn escapes_any(bytes: &[u8]) -> bool {
    let escaped = |byte: u8| (byte < 0x20) | (byte == b'"') | (byte == b'\\');
    if bytes.len() < 16 {
        return bytes.iter().any(|&byte| escaped(byte));
    }
    bytes.iter().fold(false, |any, &byte| any | escaped(byte))
}

/// Nanoseconds from which serde writes milliseconds as a plain decimal (below, as `1e-6`
/// and the like), and up to which every one has its exact decimal as its shortest form
/// (fifteen digits).
const PLAIN_NANOS: std::ops::Range<u128> = 10..1_000_000_000_000_000;

/// Appends `duration` in milliseconds exactly as serde writes [`millis`] of it, without
/// the float's formatting where its text is the plain decimal: the nanoseconds' digits
/// with a point before the last six, trailing zeros dropped (one kept after the point).
fn write_millis(out: &mut Vec<u8>, duration: Duration) -> serde_json::Result<()> {
    let nanos = duration.as_nanos();
    if nanos != 0 && !PLAIN_NANOS.contains(&nanos) {
        return serde_json::to_writer(out, &millis(duration));
    }
    let nanos = nanos as u64;
    let mut digits = itoa::Buffer::new();
    out.extend_from_slice(digits.format(nanos / 1_000_000).as_bytes());
    out.push(b'.');
    let fraction = nanos % 1_000_000;
    if fraction == 0 {
        out.push(b'0');
        return Ok(());
    }
    // Six digits, leading zeros kept, trailing ones dropped.
    let padded = digits.format(1_000_000 + fraction).as_bytes();
    let last = padded.iter().rposition(|&digit| digit != b'0').unwrap_or(0);
    out.extend_from_slice(&padded[1..=last]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorCode, ToolError};
    use serde_json::json;

    /// Call ids that JSON escapes and ones it writes as they are, short and long.
    const CALL_IDS: [&str; 8] = [
        "call \"1\"\n\u{1}é",
        "back\\slash",
        "\u{1f}",
        "call-0",
        "toolu_01A09q90qw90lq917835lq9 é ✓ \u{7f}",
        "toolu_01A09q90qw90lq917835lq9\"",
        "toolu_01A09q90qw90lq917835lq9\u{0}abc",
        "",
    ];

    /// Durations serde writes as a plain decimal or otherwise, at the edges of each.
    const NANOS: [u64; 14] = [
        0,
        1,
        9,
        10,
        100,
        312,
        999_999,
        1_000_000,
        1_250_000,
        12_345_678_000,
        999_999_999_999_999,
        1_000_000_000_000_000,
        10_000_000_000_000_000,
        u64::MAX,
    ];

    fn outcome(ok: bool, ui: Option<&str>, content: bool, duration: Duration) -> ToolOutcome {
        let result = if ok {
            // As the registry gives a result: its keys sorted, in every build.
            Ok(crate::output::sorted(
                json!({"text": "\"quoted\"\t", "list": [1, 2.5, null]}),
            ))
        } else {
            Err(ToolError::new(ErrorCode::InvalidArguments, "bad \"a\"")
                .with_details(json!({"path": "/a"})))
        };
        ToolOutcome {
            call_id: CALL_IDS[0].into(),
            tool: "a_tool_with_a_name_longer_than_inline".into(),
            result,
            duration,
            ui: ui.map(str::to_owned),
            is_content: content,
        }
    }

    /// `outcome` written here is what serde writes for its [`OutcomeBody`]: its result as
    /// a value, and as the value's text.
    fn same_as_serde(outcome: &ToolOutcome) {
        let expected = serde_json::to_string(&OutcomeBody::from(outcome.clone())).unwrap();
        let mut answer = Answer::from(outcome.clone());
        let mut written = Vec::new();
        write_outcome(&mut written, &answer).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), expected);
        if let Ok(value) = &outcome.result {
            answer.result = Ok(Produced::Text(crate::output::value_text(value).unwrap()));
            let mut written = Vec::new();
            write_outcome(&mut written, &answer).unwrap();
            assert_eq!(String::from_utf8(written).unwrap(), expected);
        }
    }

    #[test]
    fn writes_exactly_what_serde_writes_for_every_shape_of_outcome() {
        for ok in [true, false] {
            for ui in [None, Some("card"), Some("a \"quoted\" ui")] {
                for content in [false, true] {
                    for nanos in NANOS {
                        same_as_serde(&outcome(ok, ui, content, Duration::from_nanos(nanos)));
                    }
                }
            }
        }
        same_as_serde(&outcome(true, None, false, Duration::MAX));
    }

    #[test]
    fn names_are_written_as_serde_writes_them_escaped_or_not() {
        for text in CALL_IDS {
            let mut outcome = outcome(true, None, false, Duration::from_millis(1));
            outcome.call_id = text.into();
            outcome.tool = text.into();
            same_as_serde(&outcome);
        }
    }

    #[test]
    fn durations_are_written_as_their_decimal_in_milliseconds() {
        let written = |nanos| {
            let mut out = Vec::new();
            write_millis(&mut out, Duration::from_nanos(nanos)).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(written(0), "0.0");
        assert_eq!(written(100), "0.0001");
        assert_eq!(written(312), "0.000312");
        assert_eq!(written(1_000_000), "1.0");
        assert_eq!(written(1_250_000), "1.25");
        assert_eq!(written(12_345_678_901), "12345.678901");
    }

    /// Any text, control characters, quotes and backslashes included (proptest's own
    /// strings leave control characters out).
    fn any_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        proptest::collection::vec(proptest::char::any(), 0..40)
            .prop_map(|chars| chars.into_iter().collect())
    }

    /// Nanoseconds of every order of magnitude, as often small as large.
    fn any_nanos() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::strategy::Strategy;
        (0u32..64, proptest::num::u64::ANY).prop_map(|(bits, nanos)| nanos >> bits)
    }

    proptest::proptest! {
        #[test]
        fn any_names_are_written_as_serde_writes_them(
            call_id in any_text(),
            tool in any_text(),
        ) {
            let mut outcome = outcome(false, None, false, Duration::from_millis(2));
            outcome.call_id = call_id.into();
            outcome.tool = tool.into();
            same_as_serde(&outcome);
        }

        #[test]
        fn any_duration_is_written_as_serde_writes_it(nanos in any_nanos()) {
            same_as_serde(&outcome(true, None, false, Duration::from_nanos(nanos)));
        }
    }

    #[test]
    fn a_batch_is_written_as_serde_writes_its_list() {
        for count in [0, 1, 3] {
            let outcomes: Vec<ToolOutcome> = (0..count)
                .map(|n| {
                    let duration = Duration::from_micros(n as u64 * 1_500);
                    outcome(n % 2 == 0, (n == 1).then_some("card"), n == 2, duration)
                })
                .collect();
            let answers: Vec<Answer> = outcomes.iter().cloned().map(Answer::from).collect();
            let mut written = Vec::new();
            write_outcomes(&mut written, &answers).unwrap();
            let list = Outcomes {
                outcomes: outcomes.into_iter().map(OutcomeBody::from).collect(),
            };
            assert_eq!(
                String::from_utf8(written).unwrap(),
                serde_json::to_string(&list).unwrap()
            );
        }
    }

    #[test]
    fn appends_to_what_the_buffer_holds() {
        let mut written = b"[".to_vec();
        let answer = Answer::from(outcome(true, None, false, Duration::ZERO));
        write_outcome(&mut written, &answer).unwrap();
        assert!(written.starts_with(br#"[{"call_id":"#));
        assert!(written.ends_with(b"}"));
    }
}
