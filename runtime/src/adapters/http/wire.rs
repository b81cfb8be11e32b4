//! Call requests on the wire: what `POST /tools/call` is sent (outcomes out are
//! [`super::outcome`]).

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use smol_str::SmolStr;

use crate::adapters::http::errors::ApiError;
use crate::adapters::http::maybe_text::MaybeText;
use crate::arguments::ToolArguments;
use crate::call::ToolCall;
use crate::util::call_ids::new_call_id;

/// What `POST /tools/call` was asked.
pub(crate) struct CallRequest {
    pub(crate) calls: Calls,
    pub(crate) dry_run: bool,
}

/// The calls of a request.
#[derive(Debug, PartialEq)]
pub(crate) enum Calls {
    /// A single call, answered with one outcome.
    One(ToolCall),
    /// A batch, answered with a list of outcomes.
    Batch(Vec<ToolCall>),
}

const SHAPE: &str = "send {\"name\": \"tool\", \"arguments\": {...}} for one call, or {\"calls\": [...]} for a batch";

/// A body's fields, borrowed from it: the arguments stay text until the registry reads them
/// (straight into a proven tool's parameters, or checked against its schema), not built into
/// a JSON value here. Other fields are ignored.
#[derive(Deserialize, Default)]
struct Fields<'a> {
    #[serde(borrow)]
    name: Option<MaybeText<'a>>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    calls: Option<&'a RawValue>,
    #[serde(borrow)]
    dry_run: Option<&'a RawValue>,
}

pub(crate) fn parse_call_request(body: &[u8]) -> Result<CallRequest, ApiError> {
    let body = std::str::from_utf8(body)
        .map_err(|_| malformed(format!("the body is not valid JSON (not UTF-8); {SHAPE}")))?;
    let items: Vec<&RawValue> = match body.trim_start().as_bytes().first() {
        Some(b'[') => serde_json::from_str(body).map_err(unreadable)?,
        Some(b'{') => {
            let fields: Fields<'_> = serde_json::from_str(body).map_err(unreadable)?;
            let dry_run = fields.dry_run.is_some_and(|raw| raw.get() == "true");
            let Some(calls) = fields.calls else {
                return Ok(CallRequest {
                    calls: Calls::One(call_of(fields, 0, true)?),
                    dry_run,
                });
            };
            if first_byte(calls) != b'[' {
                return Err(malformed(format!("`calls` must be an array; {SHAPE}")));
            }
            let items = serde_json::from_str(calls.get()).map_err(unreadable)?;
            return Ok(CallRequest {
                calls: Calls::Batch(batch(items)?),
                dry_run,
            });
        }
        _ => {
            serde_json::from_str::<IgnoredAny>(body).map_err(unreadable)?;
            return Err(malformed(format!(
                "the body must be a JSON object or array; {SHAPE}"
            )));
        }
    };
    Ok(CallRequest {
        calls: Calls::Batch(batch(items)?),
        dry_run: false,
    })
}

/// A single call in the shape clients send, `{"name": "<name>", "arguments": {...}}` with
/// nothing else in it (JSON's whitespace anywhere between) and a name that needs no
/// escapes: the call, its arguments the text between `"arguments":` and the body's closing
/// brace, cut out without reading them (the usual read skips over them first, then reads
/// them again into the parameters).
///
/// That text is the arguments only if it is one JSON object, which is not checked here: it
/// goes to `Registry::call_ending::<IfInPlace>`, whose reader reads
/// the whole of it straight into the tool's parameters or gives the call up (an object of
/// other fields, or fields after the arguments, are not read so), and the body is then read
/// the usual way ([`parse_call_request`]).
pub(crate) fn usual_single(body: &[u8]) -> Option<ToolCall> {
    let body = std::str::from_utf8(body).ok()?;
    let rest = after_token(body, "{")?;
    let rest = after_token(rest, r#""name""#)?;
    let rest = after_token(rest, ":")?;
    let rest = after_token(rest, "\"")?;
    // The name ends at its closing quote; a backslash or a control character is read the
    // usual way.
    let end = rest.find(|c: char| c == '"' || c == '\\' || c < ' ')?;
    let (name, rest) = rest.split_at(end);
    let rest = rest.strip_prefix('"')?;
    let rest = after_token(rest, ",")?;
    let rest = after_token(rest, r#""arguments""#)?;
    let rest = after_token(rest, ":")?;
    let arguments = rest.trim_matches(JSON_WHITESPACE).strip_suffix('}')?;
    let arguments = arguments.trim_end_matches(JSON_WHITESPACE);
    if !arguments.starts_with('{') {
        return None;
    }
    let arguments = ToolArguments::Text(arguments.to_owned());
    Some(ToolCall::new(new_call_id(), SmolStr::new(name), arguments))
}

/// The characters JSON allows between tokens.
const JSON_WHITESPACE: [char; 4] = [' ', '\t', '\n', '\r'];

/// What follows `token` in `text`, past JSON's whitespace before it.
fn after_token<'a>(text: &'a str, token: &str) -> Option<&'a str> {
    text.trim_start_matches(JSON_WHITESPACE).strip_prefix(token)
}

fn unreadable(error: serde_json::Error) -> ApiError {
    malformed(format!(
        "the body could not be read as JSON ({error}); {SHAPE}"
    ))
}

/// The calls of a batch; an item that is not an object has no fields (and so no name).
fn batch(items: Vec<&RawValue>) -> Result<Vec<ToolCall>, ApiError> {
    let fields = |(index, item): (usize, &RawValue)| -> Result<ToolCall, ApiError> {
        let fields = match first_byte(item) {
            b'{' => serde_json::from_str(item.get()).map_err(|error| {
                malformed(format!(
                    "calls[{index}] could not be read ({error}); {SHAPE}"
                ))
            })?,
            _ => Fields::default(),
        };
        call_of(fields, index, false)
    };
    items.into_iter().enumerate().map(fields).collect()
}

/// The first byte of a JSON value (`RawValue` holds no outer space).
fn first_byte(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or_default()
}

fn call_of(fields: Fields<'_>, index: usize, single: bool) -> Result<ToolCall, ApiError> {
    let place = || {
        if single {
            "the call".to_owned()
        } else {
            format!("calls[{index}]")
        }
    };
    let Some(MaybeText::Text(name)) = fields.name else {
        let place = place();
        return Err(malformed(format!("{place} has no string `name`; {SHAPE}")));
    };
    let id = match fields.id.map(|raw| (first_byte(raw), raw)) {
        None | Some((b'n', _)) => new_call_id(),
        Some((b'"', raw)) => from_raw::<SmolStr>(raw).unwrap_or_default(),
        Some((_, raw)) => match from_raw::<serde_json::Number>(raw) {
            Some(number) => SmolStr::new(number.to_string()),
            None => {
                let place = place();
                return Err(malformed(format!(
                    "{place} has an `id` that is neither a string nor a number"
                )));
            }
        },
    };
    let arguments = match fields.arguments.map(|raw| (first_byte(raw), raw)) {
        None | Some((b'n', _)) => ToolArguments::Value(Value::Null),
        // Arguments sent as a string of JSON text (as OpenAI's models write them).
        Some((b'"', raw)) => ToolArguments::Text(from_raw::<String>(raw).unwrap_or_default()),
        Some((_, raw)) => ToolArguments::Text(raw.get().to_owned()),
    };
    Ok(ToolCall::new(id, SmolStr::new(name), arguments))
}

/// A raw value read as `T`, if it is one.
fn from_raw<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Option<T> {
    serde_json::from_str(raw.get()).ok()
}

fn malformed(message: String) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::BAD_REQUEST,
        "malformed_body",
        message,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: &str) -> CallRequest {
        parse_call_request(body.as_bytes()).unwrap()
    }

    /// The calls of a request, single or not.
    fn calls(body: &str) -> Vec<ToolCall> {
        match parsed(body).calls {
            Calls::One(call) => vec![call],
            Calls::Batch(calls) => calls,
        }
    }

    fn single(request: &CallRequest) -> bool {
        matches!(request.calls, Calls::One(_))
    }

    fn refused(body: &[u8]) -> String {
        match parse_call_request(body) {
            Ok(_) => panic!("accepted {body:?}"),
            Err(error) => {
                assert_eq!(error.code, "malformed_body");
                error.message
            }
        }
    }

    #[test]
    fn a_single_call_keeps_its_arguments_as_text() {
        let request = parsed(r#" {"name": "add", "arguments": {"a": 1, "b": [2]}, "extra": 1} "#);
        assert!(!request.dry_run);
        let Calls::One(call) = request.calls else {
            unreachable!("one call")
        };
        assert_eq!(
            (call.name.as_str(), call.arguments),
            ("add", r#"{"a": 1, "b": [2]}"#.into())
        );
        assert!(call.id.starts_with("call-"), "{}", call.id);
    }

    /// Name and arguments (calls without ids are given new ones each time they are read).
    fn shown(calls: Vec<ToolCall>) -> Vec<(SmolStr, ToolArguments)> {
        calls
            .into_iter()
            .map(|call| (call.name, call.arguments))
            .collect()
    }

    #[test]
    fn arguments_may_be_a_string_of_json_null_or_missing() {
        let text = calls(r#"{"name": "t", "arguments": "{\"a\": \"\u00e9\"}"}"#);
        assert_eq!(
            text[0].arguments,
            ToolArguments::Text(r#"{"a": "é"}"#.into())
        );
        for body in [r#"{"name": "t"}"#, r#"{"name": "t", "arguments": null}"#] {
            assert_eq!(calls(body)[0].arguments, ToolArguments::Value(Value::Null));
        }
        // Not an object: the registry says so, as for any caller.
        let listed = calls(r#"{"name": "t", "arguments": [1]}"#);
        assert_eq!(listed[0].arguments, ToolArguments::Text("[1]".into()));
    }

    #[test]
    fn ids_are_strings_or_numbers() {
        let ids =
            |body: &str| -> Vec<SmolStr> { calls(body).into_iter().map(|call| call.id).collect() };
        let body = r#"[{"name": "t", "id": "x"}, {"name": "t", "id": 7}, {"name": "t", "id": 1.5},
            {"name": "t", "id": null}, {"name": "t"}]"#;
        let ids = ids(body);
        assert_eq!(ids[..3], ["x", "7", "1.5"]);
        // Calls without an id get one of their own, never given to another call.
        assert!(ids[3].starts_with("call-") && ids[4].starts_with("call-"));
        assert_ne!(ids[3], ids[4]);
        assert_ne!(
            calls(r#"{"name": "t"}"#)[0].id,
            calls(r#"{"name": "t"}"#)[0].id
        );
        let message = refused(br#"{"name": "t", "id": true}"#);
        assert!(
            message.starts_with("the call has an `id` that is neither"),
            "{message}"
        );
    }

    #[test]
    fn calls_without_ids_get_ids_of_their_own() {
        let body = format!("[{}]", [r#"{"name": "t"}"#; 12].join(","));
        let ids: std::collections::HashSet<SmolStr> =
            calls(&body).into_iter().map(|call| call.id).collect();
        assert_eq!(ids.len(), 12);
    }

    #[test]
    fn batches_come_as_an_array_or_as_calls() {
        let listed = parsed(r#"[{"name": "a"}, {"name": "b", "arguments": {}}]"#);
        assert!(!single(&listed) && !listed.dry_run);
        let named = parsed(
            r#"{"calls": [{"name": "a"}, {"name": "b", "arguments": {}}], "dry_run": true}"#,
        );
        assert!(!single(&named) && named.dry_run);
        let (Calls::Batch(listed), Calls::Batch(named)) = (listed.calls, named.calls) else {
            unreachable!("batches")
        };
        assert_eq!(shown(listed), shown(named.clone()));
        assert_eq!(named[1].arguments, ToolArguments::Text("{}".into()));
        let dry = parsed(r#"{"name": "a", "dry_run": true}"#);
        assert!(single(&dry) && dry.dry_run);
    }

    #[test]
    fn malformed_bodies_say_what_is_wrong() {
        let cases: [(&[u8], &str); 9] = [
            (
                b"{not json",
                "the body could not be read as JSON (key must be a string",
            ),
            (b"", "the body could not be read as JSON (EOF"),
            (b"42", "the body must be a JSON object or array"),
            (b"\xff{}", "the body is not valid JSON (not UTF-8)"),
            (
                br#"{"name": "a"} x"#,
                "the body could not be read as JSON (trailing characters",
            ),
            (
                br#"{"name": "a", "name": "b"}"#,
                "the body could not be read as JSON (duplicate field `name`",
            ),
            (br#"{"calls": {}}"#, "`calls` must be an array"),
            (
                br#"{"calls": [{"name": "a"}, 3]}"#,
                "calls[1] has no string `name`",
            ),
            (
                br#"{"arguments": {}, "name": 3}"#,
                "the call has no string `name`",
            ),
        ];
        for (body, expected) in cases {
            let message = refused(body);
            assert!(message.starts_with(expected), "{message}");
        }
        // A name of any other kind is read past, and said to be missing.
        for name in [
            "null",
            "true",
            "-1.5",
            "[\"add\"]",
            r#"{"name": "add"}"#,
            "[[[]]]",
        ] {
            let body = format!(r#"{{"name": {name}, "arguments": {{}}}}"#);
            let message = refused(body.as_bytes());
            assert!(
                message.starts_with("the call has no string `name`"),
                "{name}: {message}"
            );
        }
    }

    #[test]
    fn a_name_is_read_with_its_escapes() {
        let named = calls(r#"[{"name": "a\u00e9\"b"}, {"name": "plain"}]"#);
        let names: Vec<&str> = named.iter().map(|call| call.name.as_str()).collect();
        assert_eq!(names, ["aé\"b", "plain"]);
    }

    /// The usual single call is cut out where it is one; its arguments' text is what the
    /// usual read gives for them wherever that text is one object.
    #[test]
    fn the_usual_single_call_is_cut_out_as_the_usual_read_reads_it() {
        for body in [
            r#"{"name": "add", "arguments": {"a": 1, "b": 2}}"#,
            r#"{"name":"add","arguments":{}}"#,
            " \r\n{\t\"name\" : \"add\" , \"arguments\" :\n{\"a\": {\"}\": \"{\"}} \n}\t",
            r#"{"name": "aé ✓", "arguments": {"text": "\"}\""}}"#,
            r#"{"name": "", "arguments": {"x": [1, {"y": null}]}}"#,
        ] {
            let cut = usual_single(body.as_bytes()).expect(body);
            assert_eq!(shown(vec![cut]), shown(calls(body)), "{body}");
        }
    }

    /// Any other shape is left to the usual read; text cut out that is not one object is the
    /// reader's to refuse (and the call is then read the usual way).
    #[test]
    fn any_other_shape_is_left_to_the_usual_read() {
        for body in [
            r#"{"id": "1", "name": "add", "arguments": {}}"#,
            r#"{"arguments": {}, "name": "add"}"#,
            r#"{"name": "a\u0064d", "arguments": {}}"#,
            r#"{"name": "a\"d", "arguments": {}}"#,
            "{\"name\": \"a\u{1}d\", \"arguments\": {}}",
            r#"{"n\u0061me": "add", "arguments": {}}"#,
            r#"{"name": "add", "arguments": "{}"}"#,
            r#"{"name": "add", "arguments": [1]}"#,
            r#"{"name": "add", "arguments": null}"#,
            r#"{"name": "add"}"#,
            r#"[{"name": "add", "arguments": {}}]"#,
            r#"{"name": 7, "arguments": {}}"#,
            "",
        ] {
            assert_eq!(usual_single(body.as_bytes()), None, "{body}");
        }
        assert_eq!(
            usual_single(b"{\"name\": \"\xff\", \"arguments\": {}}"),
            None
        );
        // Cut out, not one object: the reader refuses it whole.
        for (body, text) in [
            (
                r#"{"name": "add", "arguments": {"a": 1}, "id": "7"}"#,
                r#"{"a": 1}, "id": "7""#,
            ),
            (r#"{"name": "add", "arguments": {}"#, "{"),
            (r#"{"name": "add", "arguments": {}}}"#, "{}}"),
        ] {
            let arguments = usual_single(body.as_bytes()).map(|call| call.arguments);
            assert_eq!(arguments, Some(ToolArguments::Text(text.to_owned())));
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        }
    }
}
