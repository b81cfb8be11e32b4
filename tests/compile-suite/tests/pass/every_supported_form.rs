//! Every supported form of `#[tool]` compiles, registers, and exports the schema it should.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate::prelude::*;
use toolgate::Hints;

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Species {
    Cat,
    Dog,
}

/// A pet.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Pet {
    /// The pet's name.
    name: String,
    species: Species,
    /// Nested structs work too.
    owner: Owner,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Owner {
    email: String,
}

struct Database {
    rows: u64,
}

#[derive(Debug)]
struct MyError(String);

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Sync, plain return, primitives.
#[tool(permission = "public")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A namespaced name (MCP's format allows `.` and `/`), returning content.
#[tool(name = "clinic/pets.photo", permission = "public", read_only)]
fn pet_photo() -> Vec<toolgate::content::Content> {
    vec![toolgate::content::Content::image(b"\x89PNG", "image/png")]
}

/// Async, `Result<T, ToolError>`, every key.
#[tool(
    name = "renamed-tool",
    title = "A renamed tool",
    description = "The description from the attribute wins over the doc comment.",
    permission = "staff",
    group = "pets",
    tags = ["pets", "write"],
    risk = "high",
    destructive,
    idempotent,
    open_world,
    untrusted,
    timeout = "1500ms",
    ui = "pet_card"
)]
async fn every_key(pet: Pet) -> Result<Pet, ToolError> {
    Ok(pet)
}

/// Optional, vectors, maps, enums, renames, defaults and constraints.
#[tool(permission = "public", read_only)]
async fn shapes(
    /// An optional value.
    maybe: Option<u32>,
    /// A list.
    #[schemars(length(max = 3))]
    list: Vec<String>,
    /// A map.
    map: HashMap<String, i32>,
    sorted: BTreeMap<String, bool>,
    species: Species,
    #[serde(rename = "displayName")]
    display_name: String,
    #[serde(default)]
    flag: bool,
    #[schemars(range(min = 1, max = 10))]
    level: u8,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    slug: String,
    r#type: String,
) -> String {
    let _ = (maybe, list, map, sorted, species, flag, level, slug, r#type);
    display_name
}

/// Every context kind, mixed with arguments.
#[tool(permission = "public")]
async fn contexts(
    #[ctx] db: State<Database>,
    /// How many.
    limit: u64,
    #[ctx] caller: Caller,
    #[ctx] call_id: CallId,
    #[ctx] cancel: CancellationToken,
    #[ctx] context: ToolContext,
) -> String {
    let _ = (cancel, context);
    format!("{} {} {}", caller.id(), call_id, db.rows.min(limit))
}

/// Any `Display` error, and a `Result` alias.
#[tool(permission = "public")]
fn display_error(fail: bool) -> Result<(), MyError> {
    if fail { Err(MyError("failed".into())) } else { Ok(()) }
}

/// `std::io::Result` is a `Result` too.
#[tool(permission = "public")]
async fn io_result() -> std::io::Result<String> {
    Ok("ok".into())
}

/// No return value.
#[tool(permission = "public")]
async fn nothing() {}

/// Secret parameters are redacted in audit records, under their JSON names.
#[tool(permission = "public")]
fn secrets(
    user: String,
    #[secret] password: String,
    #[secret]
    #[serde(rename = "apiKey")]
    api_key: String,
) -> usize {
    user.len() + password.len() + api_key.len()
}

/// Not registered by itself: the application gives it a permission.
#[tool(manual, read_only)]
pub fn manual_echo(text: String) -> String {
    text
}

/// Mutable bindings are fine.
#[tool(permission = "public")]
fn mutable(mut count: u32) -> u32 {
    count += 1;
    count
}

/// Output without a schema: `serde_json::Value` has one, a plain `Serialize` type may not.
#[tool(permission = "public")]
fn untyped_output() -> NoSchema {
    NoSchema { value: 1 }
}

#[derive(Serialize)]
struct NoSchema {
    value: u8,
}

#[tokio::main]
async fn main() {
    let registry = Registry::builder()
        .roles(["public", "staff"])
        .state(Database { rows: 3 })
        .build()
        .unwrap();
    let staff = Caller::new("s", "staff");
    let get = |name: &str| registry.definition(&staff, name).unwrap();

    let renamed = get("renamed-tool");
    assert_eq!(renamed.title.as_deref(), Some("A renamed tool"));
    assert!(renamed.description.starts_with("The description from the attribute"));
    assert_eq!(renamed.group.as_deref(), Some("pets"));
    assert_eq!(renamed.tags, ["pets", "write"]);
    assert_eq!(renamed.risk, Risk::High);
    assert_eq!(
        renamed.hints,
        Hints { read_only: false, destructive: true, idempotent: true, open_world: true }
    );
    assert_eq!(renamed.timeout, Some(std::time::Duration::from_millis(1500)));
    assert!(renamed.output_schema.is_some());
    assert_eq!(renamed.ui.as_deref(), Some("pet_card"));
    assert!(renamed.untrusted_results);

    let shapes = get("shapes");
    assert!(!shapes.untrusted_results, "trusted unless said");
    let props = &shapes.input_schema["properties"];
    assert_eq!(shapes.input_schema["required"], json!(["list", "map", "sorted", "species", "displayName", "level", "slug", "type"]));
    assert_eq!(props["maybe"]["description"], "An optional value.");
    assert_eq!(props["list"]["maxItems"], 3);
    assert_eq!(props["level"]["minimum"], 1);
    assert_eq!(props["level"]["maximum"], 10);
    assert_eq!(props["slug"]["pattern"], "^[a-z]+$");
    assert!(props.get("displayName").is_some());
    assert_eq!(shapes.input_schema["additionalProperties"], false);
    assert!(shapes.hints.read_only);

    let contexts = get("contexts");
    assert_eq!(contexts.input_schema["properties"], json!({"limit": {"type": "integer", "format": "uint64", "minimum": 0, "description": "How many."}}));
    let outcome = registry.call(&staff, ToolCall::new("c-1", "contexts", json!({"limit": 10}))).await;
    assert_eq!(outcome.result.unwrap(), "s c-1 3");

    let failed = registry.call(&staff, ToolCall::new("c-2", "display_error", json!({"fail": true}))).await;
    assert_eq!(failed.error().unwrap().message, "failed");
    assert_eq!(registry.call(&staff, ToolCall::new("c-3", "io_result", json!({}))).await.result.unwrap(), "ok");
    assert_eq!(registry.call(&staff, ToolCall::new("c-4", "nothing", json!({}))).await.result.unwrap(), json!(null));
    assert_eq!(registry.call(&staff, ToolCall::new("c-5", "mutable", json!({"count": 1}))).await.result.unwrap(), 2);
    assert_eq!(registry.call(&staff, ToolCall::new("c-6", "add", json!({"a": 1, "b": 2}))).await.result.unwrap(), 3);
    assert!(get("untyped_output").output_schema.is_none());
    assert_eq!(get("add").output_schema, Some(json!({"type": "integer", "format": "int64"})));

    assert_eq!(get("secrets").secret_arguments, ["password", "apiKey"]);
    assert!(registry.definition(&staff, "manual_echo").is_none(), "manual tools are not linked");
    let with_manual = Registry::builder()
        .roles(["public", "staff"])
        .state(Database { rows: 3 })
        .tool(manual_echo_tool().permission("staff"))
        .build()
        .unwrap();
    let echoed = with_manual.call(&staff, ToolCall::new("m", "manual_echo", json!({"text": "hi"}))).await;
    assert_eq!(echoed.result.unwrap(), "hi");
    assert!(with_manual.definition(&Caller::new("p", "public"), "manual_echo").is_none());
    assert!(get("add").secret_arguments.is_empty());

    // The functions stay ordinary functions.
    assert_eq!(add(2, 2), 4);
}
