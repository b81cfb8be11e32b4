//! Every parameter shape, exported for every provider: each exported schema passes our own
//! checker for that provider, incompatibilities are reported with their paths, and the
//! canonical schema and each provider's view agree on valid and invalid arguments.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::{Value, json};
use toolgate::formats::{Format, Provider, anthropic, gemini, openai};
use toolgate::prelude::*;
use toolgate::{ToolArguments, ToolDefinition};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

/// A shipping address.
#[derive(Deserialize, schemars::JsonSchema)]
struct Address {
    street: String,
    /// Postal code.
    #[schemars(regex(pattern = r"^\d{5}$"))]
    zip: String,
    unit: Option<u16>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Payment {
    Card { last4: String },
    Cash,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

/// Order a pizza: optionals, enums, nested structs, vectors, constraints.
#[tool(permission = "public", group = "corpus")]
#[allow(clippy::too_many_arguments)]
fn order(
    size: Size,
    /// How many, 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    count: u8,
    #[schemars(length(min = 1, max = 30))] name: String,
    toppings: Vec<String>,
    address: Address,
    note: Option<String>,
    #[serde(default)] gift: bool,
    payment: Payment,
) -> String {
    let paid_by_card = match payment {
        Payment::Card { last4 } => last4.len() == 4,
        Payment::Cash => false,
    };
    let _ = (
        size,
        toppings,
        address.street,
        address.zip,
        address.unit,
        paid_by_card,
        gift,
    );
    format!(
        "{count} for {name}{}",
        note.map(|n| format!(" ({n})")).unwrap_or_default()
    )
}

/// Label things: an open map.
#[tool(permission = "public", group = "corpus")]
fn label(labels: HashMap<String, String>, counts: BTreeMap<String, u32>) -> usize {
    labels.len() + counts.len()
}

/// Walk a tree: a recursive type.
#[tool(permission = "public", group = "corpus")]
fn walk(tree: Tree) -> usize {
    fn count(tree: &Tree) -> usize {
        1 + tree.children.iter().map(count).sum::<usize>()
    }
    let _ = &tree.label;
    count(&tree)
}

/// Store anything.
#[tool(permission = "public", group = "corpus")]
fn store(value: Value) -> bool {
    !value.is_null()
}

/// Optional flags, to see strict-mode nulls come back.
#[tool(permission = "public", group = "corpus")]
fn flags(
    limit: Option<u32>,
    #[serde(default)] verbose: bool,
    #[serde(default)] tags: Vec<String>,
    address: Option<Address>,
) -> Value {
    json!({"limit": limit, "verbose": verbose, "tags": tags, "has_address": address.is_some()})
}

fn registry() -> Registry {
    Registry::builder().roles(["public"]).build().unwrap()
}

fn definition(name: &str) -> ToolDefinition {
    (*registry()
        .definition(&Caller::new("t", "public"), name)
        .unwrap())
    .clone()
}

fn valid(schema: &Value, instance: &Value) -> bool {
    jsonschema::draft202012::new(schema)
        .expect("the exported schema compiles")
        .is_valid(instance)
}

#[test]
fn every_exported_schema_passes_its_provider_checker() {
    for name in ["order", "label", "walk", "store", "flags"] {
        let canonical = definition(name).input_schema;
        if let Ok(schema) = openai::strict_schema(&canonical) {
            assert_eq!(openai::check_strict(&schema), [], "{name}: {schema:#}");
        }
        if let Ok(schema) = anthropic::strict_schema(&canonical) {
            assert_eq!(anthropic::check_strict(&schema), [], "{name}: {schema:#}");
        }
        if let Ok(schema) = gemini::declaration_schema(&canonical) {
            assert_eq!(gemini::check(&schema), [], "{name}: {schema:#}");
        }
    }
}

#[test]
fn the_canonical_schemas_themselves_are_not_strict() {
    // The checkers do find problems: the canonical schema of `order` has optional
    // properties and schemars' number formats.
    let canonical = definition("order").input_schema;
    let problems = openai::check_strict(&canonical);
    assert!(
        problems
            .iter()
            .any(|p| p.path == "/properties/note" && p.reason.contains("must be required")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.path == "/properties/count/format"),
        "{problems:?}"
    );
    assert!(!gemini::check(&canonical).is_empty());
}

#[test]
fn incompatibilities_name_path_and_reason() {
    let map = definition("label").input_schema;
    let problems = openai::strict_schema(&map).unwrap_err();
    assert_eq!(problems[0].path, "/properties/counts/additionalProperties");
    assert!(problems[0].reason.starts_with("an open map"));
    assert_eq!(problems.len(), 2);
    assert!(anthropic::strict_schema(&map).is_err());
    assert!(
        gemini::declaration_schema(&map).unwrap_err()[0]
            .reason
            .contains("Gemini cannot express")
    );

    let tree = definition("walk").input_schema;
    // OpenAI strict mode supports recursion through `$ref`; Anthropic and Gemini do not.
    assert!(openai::strict_schema(&tree).is_ok());
    let problems = gemini::declaration_schema(&tree).unwrap_err();
    assert!(
        problems[0].reason.starts_with("recursive type"),
        "{problems:?}"
    );
    assert!(
        problems[0].path.ends_with("/children/items"),
        "{problems:?}"
    );
    assert!(anthropic::strict_schema(&tree).is_err());

    let any = definition("store").input_schema;
    let problems = openai::strict_schema(&any).unwrap_err();
    assert_eq!(problems[0].path, "/properties/value");
    assert!(problems[0].reason.starts_with("accepts any JSON value"));
}

#[test]
fn openai_strict_view_of_the_pizza_order() {
    let strict = openai::strict_schema(&definition("order").input_schema).unwrap();
    let properties = &strict["properties"];
    assert_eq!(strict["additionalProperties"], false);
    assert_eq!(
        strict["required"],
        json!([
            "address", "count", "gift", "name", "note", "payment", "size", "toppings"
        ])
    );
    assert_eq!(properties["note"]["type"], json!(["string", "null"]));
    assert_eq!(properties["gift"]["type"], json!(["boolean", "null"]));
    // Lengths move into the description; ranges stay; schemars' formats go.
    assert_eq!(
        properties["name"]["description"],
        "(at least this many characters: 1, at most this many characters: 30)"
    );
    assert_eq!(properties["count"]["maximum"], 10);
    assert!(properties["count"].get("format").is_none());
    // The tagged enum's `oneOf` becomes `anyOf`; nested objects are closed too.
    let payment = &strict["$defs"]["Payment"];
    assert!(payment.get("oneOf").is_none());
    assert_eq!(payment["anyOf"][0]["additionalProperties"], false);
    assert_eq!(
        strict["$defs"]["Address"]["required"],
        json!(["street", "unit", "zip"])
    );
}

#[test]
fn gemini_view_inlines_and_collapses_nullables() {
    let schema = gemini::declaration_schema(&definition("order").input_schema).unwrap();
    assert!(schema.get("$defs").is_none());
    let address = &schema["properties"]["address"];
    assert_eq!(address["type"], "object");
    assert_eq!(address["properties"]["unit"]["type"], "integer");
    assert_eq!(address["properties"]["unit"]["nullable"], true);
    assert_eq!(
        schema["properties"]["note"],
        json!({"type": "string", "nullable": true})
    );
    assert!(address.get("additionalProperties").is_none());
    assert_eq!(
        schema["properties"]["size"]["enum"],
        json!(["small", "large"])
    );
}

#[test]
fn anthropic_strict_view_moves_constraints_into_descriptions() {
    let schema = anthropic::strict_schema(&definition("order").input_schema).unwrap();
    let count = &schema["properties"]["count"];
    assert!(count.get("maximum").is_none());
    assert_eq!(
        count["description"],
        "How many, 1 to 10. (minimum 1, maximum 10)"
    );
    assert_eq!(
        schema["properties"]["address"]["properties"]["zip"]["description"],
        "Postal code. (matching the pattern ^\\d{5}$)"
    );
    assert_eq!(schema["additionalProperties"], false);
}

/// A kind of argument mistake, to say which views can express it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Mistake {
    Type,
    Missing,
    Extra,
    Enum,
    Range,
    Length,
    Pattern,
}

fn pizza_examples() -> (Vec<Value>, Vec<(Mistake, Value)>) {
    let good = json!({
        "size": "small", "count": 2, "name": "Ada", "toppings": ["olives"],
        "address": {"street": "Main St 1", "zip": "12345"},
        "payment": {"kind": "card", "last4": "4242"}
    });
    let with = |pointer: &str, value: Value| {
        let mut example = good.clone();
        *example.pointer_mut(pointer).unwrap() = value;
        example
    };
    let without = |key: &str| {
        let mut example = good.clone();
        example.as_object_mut().unwrap().remove(key);
        example
    };
    let mut extra = good.clone();
    extra["surprise"] = json!(1);
    let mut also_valid = good.clone();
    also_valid["note"] = json!("ring twice");
    also_valid["gift"] = json!(true);
    also_valid["payment"] = json!({"kind": "cash"});
    (
        vec![good.clone(), also_valid],
        vec![
            (Mistake::Type, with("/count", json!("two"))),
            (Mistake::Type, with("/toppings", json!("olives"))),
            (Mistake::Missing, without("address")),
            (Mistake::Extra, extra),
            (Mistake::Enum, with("/size", json!("huge"))),
            (Mistake::Enum, with("/payment", json!({"kind": "cheque"}))),
            (Mistake::Range, with("/count", json!(11))),
            (Mistake::Length, with("/name", json!(""))),
            (Mistake::Pattern, with("/address/zip", json!("abc"))),
        ],
    )
}

/// Checks that a view accepts every valid example and rejects every invalid one whose
/// mistake it can express; the others must be visible in a description instead.
fn assert_agreement(view: &str, schema: &Value, expressible: &[Mistake]) {
    let canonical = definition("order").input_schema;
    let (good, bad) = pizza_examples();
    for example in &good {
        assert!(valid(&canonical, example), "canonical rejects {example}");
        assert!(valid(schema, example), "{view} rejects {example}");
    }
    for (mistake, example) in &bad {
        assert!(
            !valid(&canonical, example),
            "canonical accepts {mistake:?}: {example}"
        );
        if expressible.contains(mistake) {
            assert!(
                !valid(schema, example),
                "{view} accepts {mistake:?}: {example}"
            );
        } else {
            let text = schema.to_string();
            let hint = match mistake {
                Mistake::Range => "maximum 10",
                Mistake::Length => "at least this many characters: 1",
                Mistake::Pattern => "matching the pattern",
                Mistake::Extra => return,
                other => panic!("{view} cannot express {other:?}"),
            };
            assert!(
                text.contains(hint),
                "{view} neither enforces nor describes {mistake:?}"
            );
        }
    }
}

#[test]
fn canonical_and_provider_views_agree_on_arguments() {
    use Mistake::*;
    let canonical = definition("order").input_schema;
    assert_agreement(
        "canonical",
        &canonical,
        &[Type, Missing, Extra, Enum, Range, Length, Pattern],
    );
    // Strict OpenAI makes optional properties required-but-nullable: the valid examples
    // that omit them come back with nulls, checked in `strict_nulls_come_back_as_absent`.
    let strict = openai::strict_schema(&canonical).unwrap();
    let (good, _) = pizza_examples();
    let completed: Vec<Value> = good
        .iter()
        .map(|example| {
            let mut example = example.clone();
            for key in ["note", "gift"] {
                example
                    .as_object_mut()
                    .unwrap()
                    .entry(key)
                    .or_insert(Value::Null);
            }
            example["address"]
                .as_object_mut()
                .unwrap()
                .entry("unit")
                .or_insert(Value::Null);
            example
        })
        .collect();
    for example in &completed {
        assert!(valid(&strict, example), "strict rejects {example}");
    }
    assert_agreement_strict(&strict);
    let anthropic = anthropic::strict_schema(&canonical).unwrap();
    assert_agreement(
        "anthropic strict",
        &anthropic,
        &[Type, Missing, Extra, Enum],
    );
    // Gemini's `nullable` is not JSON Schema; examples without nulls are compared.
    let gemini = gemini::declaration_schema(&canonical).unwrap();
    assert_agreement(
        "gemini",
        &gemini,
        &[Type, Missing, Enum, Range, Length, Pattern],
    );
}

fn assert_agreement_strict(strict: &Value) {
    let (_, bad) = pizza_examples();
    for (mistake, example) in bad {
        if mistake == Mistake::Length {
            assert!(
                strict
                    .to_string()
                    .contains("at least this many characters: 1")
            );
        } else {
            assert!(
                !valid(strict, &example),
                "strict accepts {mistake:?}: {example}"
            );
        }
    }
}

#[tokio::test]
async fn strict_nulls_come_back_as_absent() {
    let registry = registry();
    let caller = Caller::new("t", "public");
    let strict = registry.export(&caller, Format::OpenAiChat { strict: true });
    let flags = strict
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "flags")
        .unwrap();
    assert_eq!(flags["function"]["strict"], true);
    // What a strict model sends when it leaves everything out:
    let arguments = json!({"limit": null, "verbose": null, "tags": null, "address": null});
    assert!(valid(&flags["function"]["parameters"], &arguments));
    let outcome = registry
        .call(
            &caller,
            ToolCall::new("1", "flags", ToolArguments::Text(arguments.to_string())),
        )
        .await;
    assert_eq!(
        outcome.result.unwrap(),
        json!({"limit": null, "verbose": false, "tags": [], "has_address": false})
    );
    // Nested optionals too.
    let arguments = json!({"limit": 3, "verbose": true, "tags": ["a"], "address": {"street": "s", "zip": "12345", "unit": null}});
    let outcome = registry
        .call(&caller, ToolCall::new("2", "flags", arguments))
        .await;
    assert_eq!(
        outcome.result.unwrap(),
        json!({"limit": 3, "verbose": true, "tags": ["a"], "has_address": true})
    );
}

#[test]
fn strict_export_falls_back_per_tool_and_build_can_require_compatibility() {
    let registry = registry();
    let tools = registry.export(
        &Caller::new("t", "public"),
        Format::OpenAiChat { strict: true },
    );
    let strict_of = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == name)
            .unwrap()["function"]["strict"]
            .clone()
    };
    assert_eq!(strict_of("order"), true);
    assert_eq!(strict_of("label"), false);

    let error = Registry::builder()
        .roles(["public"])
        .require_compatible([Provider::OpenAiStrict, Provider::Gemini])
        .build()
        .unwrap_err();
    let text = error.to_string();
    for expected in [
        "tool `label` cannot be used with OpenAI strict mode: at `/properties/counts/additionalProperties`: an open map",
        "tool `store` cannot be used with OpenAI strict mode: at `/properties/value`: accepts any JSON value",
        "tool `walk` cannot be used with Gemini: at `/properties/tree/properties/children/items`: recursive type",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    assert!(!text.contains("tool `order` cannot"), "{text}");
}

#[test]
fn exports_are_cached_per_role_and_format() {
    let registry = registry();
    let caller = Caller::new("t", "public");
    let first = registry.export(&caller, Format::Gemini);
    assert!(std::sync::Arc::ptr_eq(
        &first,
        &registry.export(&caller, Format::Gemini)
    ));
    assert!(!std::sync::Arc::ptr_eq(
        &first,
        &registry.export(&caller, Format::Mcp)
    ));
}

#[test]
fn a_value_result_publishes_no_output_schema() {
    // `flags` returns `serde_json::Value`: an empty schema would tell a client nothing.
    assert_eq!(definition("flags").output_schema, None);
    assert!(
        toolgate::formats::mcp::tool(&definition("flags"))
            .get("outputSchema")
            .is_none()
    );
    assert!(
        definition("order").output_schema.is_some(),
        "a String result keeps its schema"
    );
}

#[test]
fn mcp_schemas_keep_only_the_formats_of_json_schema() {
    // The canonical schema keeps schemars' integer widths (the registry validates against it,
    // and a `format` is an annotation); MCP clients that check formats warn about them.
    let order = definition("order");
    assert_eq!(order.input_schema["properties"]["count"]["format"], "uint8");
    let mut definition = ToolDefinition::new(
        "when",
        "Dates and counts.",
        "public",
        json!({
            "type": "object",
            "properties": {
                "at": {"type": "string", "format": "date-time"},
                "ids": {"type": "array", "items": {"type": "integer", "format": "int64", "minimum": 0}},
                "point": {"$ref": "#/$defs/Point"}
            },
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}, "mail": {"type": "string", "format": "email"}}}}
        }),
    );
    definition.output_schema = Some(json!({"type": "integer", "format": "uint32", "minimum": 0}));
    let tool = toolgate::formats::mcp::tool(&definition);
    let input = &tool["inputSchema"];
    assert_eq!(input["properties"]["at"]["format"], "date-time");
    assert_eq!(
        input["$defs"]["Point"]["properties"]["mail"]["format"],
        "email"
    );
    assert!(
        input["properties"]["ids"]["items"].get("format").is_none(),
        "{input}"
    );
    assert_eq!(
        input["properties"]["ids"]["items"]["minimum"], 0,
        "bounds stay"
    );
    assert!(
        input["$defs"]["Point"]["properties"]["x"]
            .get("format")
            .is_none()
    );
    let output = &tool["outputSchema"]["properties"]["result"];
    assert_eq!(output, &json!({"type": "integer", "minimum": 0}));
    let mcp = toolgate::formats::mcp::tool(&order);
    assert!(!mcp.to_string().contains("uint8"), "{mcp}");
}
