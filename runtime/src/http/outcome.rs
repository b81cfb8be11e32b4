//! Outcomes on the wire: what `POST /tools/call` answers. One outcome's JSON is written
//! with its keys as they are: the keys are constants, and serde would escape each of them
//! again on every response (about a tenth of what the endpoint adds to a bare handler).
//! The values go through serde as ever; the text is exactly [`OutcomeBody`]'s serialization
//! (a test holds the two together).

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
        let duration_ms = outcome.duration.as_secs_f64() * 1000.0;
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
pub(crate) fn outcome_response(outcome: ToolOutcome) -> Response {
    let body = OutcomeBody::from(outcome);
    let mut bytes = Vec::with_capacity(OUTCOME_CAPACITY);
    match write_outcome(&mut bytes, &body) {
        Ok(()) => json_response(bytes),
        // axum's own answer to a body that cannot be written.
        Err(_) => Json(body).into_response(),
    }
}

/// A batch's outcomes as JSON: `{"outcomes": [...]}`, in the calls' order.
#[derive(Serialize)]
struct Outcomes<'a> {
    outcomes: &'a [OutcomeBody],
}

/// A batch's outcomes as a JSON response (see [`Outcomes`]).
pub(crate) fn outcomes_response(outcomes: Vec<ToolOutcome>) -> Response {
    let bodies: Vec<OutcomeBody> = outcomes.into_iter().map(OutcomeBody::from).collect();
    let mut bytes = Vec::with_capacity(OUTCOME_CAPACITY * bodies.len().max(1));
    match write_outcomes(&mut bytes, &bodies) {
        Ok(()) => json_response(bytes),
        Err(_) => Json(Outcomes { outcomes: &bodies }).into_response(),
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

/// Appends `body` as compact JSON to `out`.
fn write_outcome(out: &mut Vec<u8>, body: &OutcomeBody) -> serde_json::Result<()> {
    text_field(out, br#"{"call_id":"#, &body.call_id)?;
    text_field(out, br#","tool":"#, &body.tool)?;
    out.extend_from_slice(if body.ok {
        br#","ok":true"#
    } else {
        br#","ok":false"#
    });
    if let Some(result) = &body.result {
        field(out, br#","result":"#, result)?;
    }
    if let Some(error) = &body.error {
        field(out, br#","error":"#, error)?;
    }
    field(out, br#","duration_ms":"#, &body.duration_ms)?;
    if let Some(ui) = &body.ui {
        field(out, br#","ui":"#, ui)?;
    }
    if body.content {
        out.extend_from_slice(br#","content":true"#);
    }
    out.push(b'}');
    Ok(())
}

/// Appends [`Outcomes`] of `bodies` as compact JSON to `out`.
fn write_outcomes(out: &mut Vec<u8>, bodies: &[OutcomeBody]) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"outcomes":["#);
    for (index, body) in bodies.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_outcome(out, body)?;
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

/// Appends `key` (written as it is: a separator, a quoted name and a colon) and `value`.
fn field(out: &mut Vec<u8>, key: &[u8], value: &impl Serialize) -> serde_json::Result<()> {
    out.extend_from_slice(key);
    serde_json::to_writer(out, value)
}

/// Appends `key` and the string `text`: as it is, quoted, where JSON escapes none of its
/// characters (a tool's name never needs it, nor do most call ids); else through serde.
fn text_field(out: &mut Vec<u8>, key: &[u8], text: &str) -> serde_json::Result<()> {
    if escapes_any(text.as_bytes()) {
        return field(out, key, &text);
    }
    out.reserve(key.len() + text.len() + 2);
    out.extend_from_slice(key);
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
    Ok(())
}

/// Whether JSON escapes any of `bytes`: quotes, backslashes and control characters (serde
/// nothing else). Every byte is looked at, with no early exit, so that the compiler checks
/// sixteen at a time.
fn escapes_any(bytes: &[u8]) -> bool {
    bytes.iter().fold(false, |escapes, &byte| {
        escapes | (byte < 0x20) | (byte == b'"') | (byte == b'\\')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorCode, ToolError};
    use serde_json::json;

    /// Call ids that JSON escapes and ones it writes as they are.
    const CALL_IDS: [&str; 6] = [
        "call \"1\"\n\u{1}é",
        "back\\slash",
        "\u{1f}",
        "call-0",
        "toolu_01A09q90qw90lq917835lq9 é ✓ \u{7f}",
        "",
    ];

    fn body(ok: bool, ui: Option<&str>, content: bool, duration_ms: f64) -> OutcomeBody {
        OutcomeBody {
            call_id: CALL_IDS[0].into(),
            tool: "a_tool_with_a_name_longer_than_inline".into(),
            ok,
            result: ok.then(|| json!({"text": "\"quoted\"\t", "list": [1, 2.5, null]})),
            error: (!ok).then(|| {
                ToolError::new(ErrorCode::InvalidArguments, "bad \"a\"")
                    .with_details(json!({"path": "/a"}))
            }),
            duration_ms,
            ui: ui.map(str::to_owned),
            content,
        }
    }

    #[test]
    fn writes_exactly_what_serde_writes_for_every_shape_of_outcome() {
        for ok in [true, false] {
            for ui in [None, Some("card"), Some("a \"quoted\" ui")] {
                for content in [false, true] {
                    for duration_ms in [0.0, 1.25, 1e-9, 12345.678, f64::NAN, f64::INFINITY] {
                        let body = body(ok, ui, content, duration_ms);
                        let mut written = Vec::new();
                        write_outcome(&mut written, &body).unwrap();
                        assert_eq!(
                            String::from_utf8(written).unwrap(),
                            serde_json::to_string(&body).unwrap(),
                            "ok {ok}, ui {ui:?}, content {content}, duration {duration_ms}"
                        );
                    }
                }
            }
        }
    }

    fn same_as_serde(body: &OutcomeBody) {
        let mut written = Vec::new();
        write_outcome(&mut written, body).unwrap();
        assert_eq!(
            String::from_utf8(written).unwrap(),
            serde_json::to_string(body).unwrap()
        );
    }

    #[test]
    fn names_are_written_as_serde_writes_them_escaped_or_not() {
        for text in CALL_IDS {
            let mut body = body(true, None, false, 1.0);
            body.call_id = text.into();
            body.tool = text.into();
            same_as_serde(&body);
        }
    }

    /// Any text, control characters, quotes and backslashes included (proptest's own
    /// strings leave control characters out).
    fn any_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        proptest::collection::vec(proptest::char::any(), 0..40)
            .prop_map(|chars| chars.into_iter().collect())
    }

    proptest::proptest! {
        #[test]
        fn any_names_are_written_as_serde_writes_them(
            call_id in any_text(),
            tool in any_text(),
        ) {
            let mut body = body(false, None, false, 2.0);
            body.call_id = call_id.into();
            body.tool = tool.into();
            same_as_serde(&body);
        }
    }

    #[test]
    fn a_batch_is_written_as_serde_writes_its_list() {
        for count in [0, 1, 3] {
            let bodies: Vec<OutcomeBody> = (0..count)
                .map(|n| body(n % 2 == 0, (n == 1).then_some("card"), n == 2, n as f64))
                .collect();
            let mut written = Vec::new();
            write_outcomes(&mut written, &bodies).unwrap();
            let list = Outcomes { outcomes: &bodies };
            assert_eq!(
                String::from_utf8(written).unwrap(),
                serde_json::to_string(&list).unwrap()
            );
        }
    }

    #[test]
    fn appends_to_what_the_buffer_holds() {
        let mut written = b"[".to_vec();
        write_outcome(&mut written, &body(true, None, false, 1.0)).unwrap();
        assert!(written.starts_with(br#"[{"call_id":"#));
        assert!(written.ends_with(b"}"));
    }
}
