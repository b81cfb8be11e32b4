//! A model that sends a wrong enum value is told what is allowed, whatever form the enum
//! takes in the schema: plain, in an `Option`, with documented variants, renamed, internally
//! or adjacently tagged, or untagged.
// The enums only need to be read from JSON; their fields are never looked at.
#![allow(dead_code)]

use serde::Deserialize;
use serde_json::{Value, json};
use toolgate::prelude::*;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Plain {
    Monday,
    Tuesday,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Documented {
    /// The first day.
    Monday,
    /// The second day.
    Tuesday,
}

#[derive(Deserialize, schemars::JsonSchema)]
enum Renamed {
    #[serde(rename = "MON")]
    Monday,
    #[serde(rename = "TUE")]
    Tuesday,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Internal {
    Circle { radius: f64 },
    Square { side: f64 },
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "size", rename_all = "lowercase")]
enum Adjacent {
    Circle(f64),
    Square(f64),
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Number(i64),
    Flag(bool),
}

/// Take one of each enum form.
#[tool(permission = "user", read_only)]
#[allow(clippy::too_many_arguments)]
fn every_enum(
    plain: Option<Plain>,
    optional: Option<Plain>,
    documented: Option<Documented>,
    optional_documented: Option<Documented>,
    renamed: Option<Renamed>,
    internal: Option<Internal>,
    adjacent: Option<Adjacent>,
    untagged: Option<Untagged>,
) -> u8 {
    let _ = (plain, optional, documented, optional_documented, renamed);
    let _ = (internal, adjacent, untagged);
    0
}

async fn message_for(arguments: Value) -> String {
    let registry = Registry::builder().roles(["user"]).build().unwrap();
    let outcome = registry
        .call(
            &Caller::new("u", "user"),
            ToolCall::new("1", "every_enum", arguments),
        )
        .await;
    let error = outcome.error().expect("the value is refused").clone();
    assert_eq!(error.code, ErrorCode::InvalidArguments);
    error.message
}

#[tokio::test]
async fn every_enum_form_lists_what_is_allowed() {
    let cases = [
        (
            json!({"plain": "funday"}),
            vec!["\"monday\"", "\"tuesday\""],
        ),
        (
            json!({"optional": "funday"}),
            vec!["\"monday\"", "\"tuesday\"", "null"],
        ),
        (
            json!({"documented": "funday"}),
            vec!["\"monday\"", "\"tuesday\""],
        ),
        (
            json!({"optional_documented": "funday"}),
            vec!["\"monday\"", "\"tuesday\"", "null"],
        ),
        (json!({"renamed": "Monday"}), vec!["\"MON\"", "\"TUE\""]),
        (
            json!({"internal": {"kind": "triangle"}}),
            vec![
                "\"kind\": \"circle\"",
                "\"radius\": …",
                "\"kind\": \"square\"",
                "\"side\": …",
            ],
        ),
        (
            json!({"adjacent": {"kind": "triangle", "size": 1}}),
            vec![
                "\"kind\": \"circle\"",
                "\"kind\": \"square\"",
                "\"size\": …",
            ],
        ),
        (json!({"untagged": "text"}), vec!["an integer", "a boolean"]),
    ];
    for (arguments, expected) in cases {
        let message = message_for(arguments.clone()).await;
        assert!(
            !message.contains("not valid under any of the schemas"),
            "{arguments}: {message}"
        );
        for allowed in expected {
            assert!(
                message.contains(allowed),
                "{arguments}: `{allowed}` missing in {message}"
            );
        }
    }
}
