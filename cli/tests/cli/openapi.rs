//! `toolgate tools import-openapi`: a document with path, query and body parameters becomes
//! one tool file per operation and one `[sources.NAME]`; the tools validate and call the API
//! (a loopback server) as the document says.

use serde_json::{Value, json};

use crate::support::{BASE, Project};

const SHOP: &str = r##"
openapi: 3.1.0
info: {title: Shop, version: "1"}
servers:
  - url: "{scheme}://shop.invalid/api"
    variables: {scheme: {default: https}}
security: [{token: []}]
components:
  securitySchemes:
    token: {type: http, scheme: bearer}
  schemas:
    Order:
      type: object
      required: [sku, count]
      properties:
        sku: {type: string, description: The item's code.}
        count: {type: integer, minimum: 1}
        note: {type: [string, "null"]}
paths:
  /stock/{sku}:
    parameters:
      - {name: sku, in: path, required: true, schema: {type: string}, description: The item's code.}
    get:
      operationId: getStock
      summary: Stock of an item.
      parameters:
        - {name: warehouse, in: query, schema: {type: string, enum: [north, south]}}
        - {name: X-Trace, in: header, schema: {type: string}}
  /orders:
    post:
      operationId: create order
      summary: Order an item.
      description: |
        Order an item.
        Orders over 100 items wait for a person.
      parameters:
        - {name: dry_run, in: query, schema: {type: boolean}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Order"}
  /orders/{id}:
    delete:
      operationId: cancelOrder
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
  /upload:
    post:
      operationId: upload
      requestBody:
        content:
          application/octet-stream: {schema: {type: string, format: binary}}
"##;

async fn echo_server() -> String {
    use axum::extract::Request;
    async fn echo(request: Request) -> axum::Json<Value> {
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        axum::Json(json!({
            "method": parts.method.as_str(),
            "path": parts.uri.path(),
            "query": parts.uri.query(),
            "authorization": parts.headers.get("authorization").and_then(|v| v.to_str().ok()),
            "body": serde_json::from_slice::<Value>(&body).ok(),
        }))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(axum::routing::any(echo));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openapi_document_becomes_tools_that_call_the_api() {
    let server = echo_server().await;
    let project = Project::new(&format!(
        "{BASE}\n[web]\nallow_networks = [\"127.0.0.0/8\"]\n"
    ));
    project.write("shop.yaml", SHOP);
    let run = |args: &[&str]| {
        let mut command = project.command();
        command.args(args).env("SHOP_TOKEN", "shop-secret");
        tokio::task::block_in_place(|| project.run_with(&mut command, ""))
    };
    let imported = run(&["tools", "import-openapi", "shop.yaml", "--source", "shop"]).expect(0);
    let said = imported.stdout();
    for expected in [
        "wrote ./.toolgate/tools/getStock.md",
        "wrote ./.toolgate/tools/create_order.md",
        "wrote ./.toolgate/tools/cancelOrder.md",
        "added [sources.shop]",
        "left out: POST /upload: its body is not JSON",
        "set SHOP_TOKEN before calling the tools",
    ] {
        assert!(said.contains(expected), "missing {expected:?} in:\n{said}");
    }
    let config = std::fs::read_to_string(project.path().join("toolgate.toml")).unwrap();
    assert!(
        config.contains(
            "[sources.shop]\nurl = \"https://shop.invalid/api\"\nbearer_env = \"SHOP_TOKEN\""
        ),
        "{config}"
    );
    run(&["tools", "validate"]).expect(0);

    // The document's server is not reachable here: the source points at the loopback API.
    let config = config.replace("https://shop.invalid/api", &format!("{server}/api"));
    project.write("toolgate.toml", &config);
    let info = run(&["tools", "info", "create_order", "--json"])
        .expect(0)
        .json();
    let schema = &info["input_schema"];
    assert_eq!(schema["required"], json!(["sku", "count"]), "{schema}");
    assert_eq!(
        schema["properties"]["note"]["type"],
        json!(["string", "null"])
    );
    assert!(
        info["description"]
            .as_str()
            .unwrap()
            .contains("Orders over 100 items wait")
    );

    let stock = run(&["call", "getStock", "--sku", "MUG-1", "--warehouse", "north"])
        .expect(0)
        .json();
    assert_eq!(stock["path"], "/api/stock/MUG-1");
    assert_eq!(stock["query"], "warehouse=north");
    assert_eq!(stock["authorization"], "Bearer shop-secret");
    let order = run(&[
        "call",
        "create_order",
        "--sku",
        "MUG-1",
        "--count",
        "3",
        "--dry_run",
        "true",
    ])
    .expect(0)
    .json();
    assert_eq!(order["method"], "POST");
    assert_eq!(
        (order["path"].as_str(), order["query"].as_str()),
        (Some("/api/orders"), Some("dry_run=true"))
    );
    assert_eq!(order["body"], json!({"sku": "MUG-1", "count": 3}));
    let refused = run(&["call", "create_order", "--sku", "MUG-1", "--count", "0"]).expect(1);
    assert!(
        refused.stderr().contains("invalid_arguments"),
        "{}",
        refused.stderr()
    );
    // A DELETE is destructive: asked first (and refused here, stdin being empty).
    let cancel = run(&["call", "cancelOrder", "--id", "7"]);
    assert_eq!(cancel.code(), 3, "{}", cancel.stderr());

    // Imported again: the files and the source are kept.
    let again = run(&["tools", "import-openapi", "shop.yaml", "--source", "shop"]).expect(0);
    assert!(
        again.stdout().contains("exists: kept, not replaced"),
        "{}",
        again.stdout()
    );
    assert!(
        again.stdout().contains("[sources.shop] is in"),
        "{}",
        again.stdout()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_json_3_0_document_with_an_api_key_and_mistakes_said() {
    let project = Project::new(BASE);
    let doc = json!({
        "openapi": "3.0.3", "info": {"title": "Pets", "version": "1"},
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}},
        "paths": {"/pets": {"get": {"summary": "List pets.", "parameters": [
            {"name": "limit", "in": "query", "schema": {"type": "integer", "nullable": true}}]}}}
    });
    project.write("pets.json", &doc.to_string());
    let no_server = project
        .run(
            &["tools", "import-openapi", "pets.json", "--source", "pets"],
            "",
        )
        .expect(2);
    assert!(
        no_server
            .stderr()
            .contains("give the API's address with --base-url"),
        "{}",
        no_server.stderr()
    );
    let args = [
        "tools",
        "import-openapi",
        "pets.json",
        "--source",
        "pets",
        "--base-url",
        "https://pets.invalid",
    ];
    let imported = project.run(&args, "").expect(0);
    assert!(
        imported
            .stdout()
            .contains("wrote ./.toolgate/tools/get_pets.md"),
        "{}",
        imported.stdout()
    );
    assert!(
        imported.stdout().contains("set PETS_API_KEY"),
        "{}",
        imported.stdout()
    );
    let config = std::fs::read_to_string(project.path().join("toolgate.toml")).unwrap();
    assert!(
        config.contains("headers = { \"X-Api-Key\" = \"${PETS_API_KEY}\" }"),
        "{config}"
    );
    project.run(&["tools", "validate"], "").expect(0);

    project.write("swagger.json", r#"{"swagger": "2.0", "paths": {}}"#);
    let old = project
        .run(
            &["tools", "import-openapi", "swagger.json", "--source", "old"],
            "",
        )
        .expect(2);
    assert!(
        old.stderr().contains("not an OpenAPI 3.0 or 3.1 document"),
        "{}",
        old.stderr()
    );
    let bad_name = project
        .run(
            &["tools", "import-openapi", "pets.json", "--source", "a b"],
            "",
        )
        .expect(2);
    assert!(
        bad_name.stderr().contains("use letters, digits"),
        "{}",
        bad_name.stderr()
    );
}
