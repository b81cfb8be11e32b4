//! HTTP tools against a loopback server: placeholders percent-encoded, the other arguments
//! in the query or the JSON body, secrets from the environment in headers (never shown),
//! the address checks of `fetch_webpage`, error answers.

use axum::Json;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::routing::any;
use serde_json::{Value, json};

use crate::support::{BASE, Project};

/// Answers every request with what it received; `/missing/...` answers 404.
async fn echo_server() -> String {
    async fn echo(request: Request) -> Result<Json<Value>, (StatusCode, String)> {
        let (parts, body) = request.into_parts();
        if parts.uri.path().starts_with("/missing") {
            return Err((StatusCode::NOT_FOUND, "no such item".into()));
        }
        let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        Ok(Json(json!({
            "method": parts.method.as_str(),
            "path": parts.uri.path(),
            "query": parts.uri.query(),
            "authorization": parts.headers.get("authorization").and_then(|v| v.to_str().ok()),
            "traceparent": parts.headers.get("traceparent").and_then(|v| v.to_str().ok()),
            "body": serde_json::from_slice::<Value>(&body).ok(),
        })))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(
        async move { axum::serve(listener, axum::Router::new().fallback(any(echo))).await },
    );
    format!("http://{address}")
}

fn project(server: &str, allow_loopback: bool) -> Project {
    let web = if allow_loopback {
        "\n[web]\nallow_networks = [\"127.0.0.0/8\"]\n"
    } else {
        ""
    };
    let project = Project::new(&format!("{BASE}{web}"));
    project.write(
        ".toolgate/tools/get_item.md",
        &format!(
            "---\nname: get_item\ndescription: Fetch an item.\npermission: public\nread_only: true\nparameters:\n  id: {{type: string}}\n  fields: {{type: array, items: string, required: false}}\nhttp:\n  url: {server}/items/{{id}}\n  headers: {{Authorization: \"Bearer ${{ITEMS_TOKEN}}\"}}\n---\n"
        ),
    );
    project.write(
        ".toolgate/tools/create_item.toml",
        &format!(
            "name = \"create_item\"\ndescription = \"Create an item.\"\npermission = \"public\"\n[parameters]\nshelf = \"string\"\nname = \"string\"\ncount = \"integer\"\n[http]\nmethod = \"POST\"\nurl = \"{server}/shelves/{{shelf}}/items\"\n"
        ),
    );
    project.write(
        ".toolgate/tools/missing_item.md",
        &format!("---\nname: missing_item\ndescription: Always 404.\npermission: public\nhttp: {{url: \"{server}/missing/x\"}}\n---\n"),
    );
    project
}

async fn run(project: &Project, args: &[&str], token: Option<&str>) -> crate::support::Ran {
    let mut command = project.command();
    command.args(args);
    match token {
        Some(token) => command.env("ITEMS_TOKEN", token),
        None => command.env_remove("ITEMS_TOKEN"),
    };
    tokio::task::block_in_place(|| project.run_with(&mut command, ""))
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_are_built_from_the_arguments() {
    let server = echo_server().await;
    let project = project(&server, true);
    let got = run(
        &project,
        &[
            "call",
            "get_item",
            "--id",
            "a/b?c=d#e",
            "--fields",
            "name",
            "--fields",
            "size",
        ],
        Some("s3cret"),
    )
    .await
    .expect(0)
    .json();
    assert_eq!(got["method"], "GET");
    assert_eq!(
        got["path"], "/items/a%2Fb%3Fc%3Dd%23e",
        "a placeholder cannot add a path, query or fragment"
    );
    assert_eq!(got["query"], "fields=name&fields=size");
    assert_eq!(got["authorization"], "Bearer s3cret");
    let created = run(
        &project,
        &[
            "call",
            "create_item",
            "--shelf",
            "top",
            "--name",
            "lamp",
            "--count",
            "2",
        ],
        None,
    )
    .await
    .expect(0)
    .json();
    assert_eq!(created["method"], "POST");
    assert_eq!(created["path"], "/shelves/top/items");
    assert_eq!(created["body"], json!({"name": "lamp", "count": 2}));
}

#[tokio::test(flavor = "multi_thread")]
async fn with_telemetry_a_request_carries_the_calls_trace_context() {
    let server = echo_server().await;
    let untraced = project(&server, true);
    let got = run(&untraced, &["call", "get_item", "--id", "1"], Some("t"))
        .await
        .expect(0)
        .json();
    assert_eq!(
        got["traceparent"],
        Value::Null,
        "no telemetry, no trace context"
    );
    // A collector that is not there: the spans are made (and their export fails quietly).
    let traced = project(&server, true);
    let config = std::fs::read_to_string(traced.path().join("toolgate.toml")).unwrap();
    traced.write(
        "toolgate.toml",
        &format!("{config}\n[telemetry]\nendpoint = \"http://127.0.0.1:9\"\n"),
    );
    let got = run(&traced, &["call", "get_item", "--id", "1"], Some("t"))
        .await
        .expect(0)
        .json();
    let traceparent = got["traceparent"].as_str().expect("a traceparent header");
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(
        (parts.len(), parts[0], parts[1].len(), parts[2].len()),
        (4, "00", 32, 16)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_errors_and_address_checks() {
    let server = echo_server().await;
    let project = project(&server, true);
    let missing = run(&project, &["call", "get_item", "--id", "1"], None)
        .await
        .expect(1);
    assert!(
        missing
            .stderr()
            .contains("`ITEMS_TOKEN` this tool needs is not set"),
        "{}",
        missing.stderr()
    );
    let not_found = run(&project, &["call", "missing_item"], None)
        .await
        .expect(1);
    assert!(
        not_found
            .stderr()
            .contains("answered 404 Not Found: no such item"),
        "{}",
        not_found.stderr()
    );
    let audit = std::fs::read_to_string(project.path().join("audit.jsonl")).unwrap();
    assert!(!audit.contains("s3cret"));

    let closed = self::project(&server, false);
    let refused = run(&closed, &["call", "get_item", "--id", "1"], Some("s3cret"))
        .await
        .expect(1);
    assert!(
        refused.stderr().contains("address_not_allowed"),
        "{}",
        refused.stderr()
    );
    assert!(
        refused.stderr().contains("loopback"),
        "{}",
        refused.stderr()
    );
    assert!(!refused.stderr().contains("s3cret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approver_sees_the_request_without_its_secrets() {
    let server = echo_server().await;
    let project = project(&server, true);
    project.write(
        ".toolgate/tools/send_code.md",
        &format!("---\nname: send_code\ndescription: Send a login code.\npermission: public\nrisk: high\nsecret: [code]\nparameters: {{to: string, code: string}}\nhttp: {{method: POST, url: \"{server}/send/{{to}}\"}}\n---\n"),
    );
    let mut command = project.command();
    command.args(["call", "send_code", "--to", "ann", "--code", "918273"]);
    let ran = tokio::task::block_in_place(|| project.run_with(&mut command, "n\n")).expect(3);
    let asked = ran.stderr();
    assert!(
        asked.contains(&format!("\"url\":\"{server}/send/ann\"")),
        "{asked}"
    );
    assert!(asked.contains("\"method\":\"POST\""), "{asked}");
    assert!(asked.contains("[redacted]"), "{asked}");
    assert!(!asked.contains("918273"), "{asked}");
}

#[tokio::test(flavor = "multi_thread")]
async fn placeholders_keep_unreserved_characters_and_refuse_dot_segments() {
    let server = echo_server().await;
    let project = project(&server, true);
    let got = run(
        &project,
        &["call", "get_item", "--id", "MUG-1_a.b~c d"],
        Some("t"),
    )
    .await
    .expect(0)
    .json();
    assert_eq!(
        got["path"], "/items/MUG-1_a.b~c%20d",
        "RFC 3986's unreserved characters stay"
    );
    for dots in [".", ".."] {
        let refused = run(&project, &["call", "get_item", "--id", dots], Some("t"))
            .await
            .expect(1);
        assert!(
            refused.stderr().contains("would change the request's path"),
            "{}",
            refused.stderr()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_share_a_source_and_name_their_query() {
    let server = echo_server().await;
    let config = format!(
        "{BASE}\n[web]\nallow_networks = [\"127.0.0.0/8\"]\n\n[sources.shop]\nurl = \"{server}/api/v2/\"\nbearer_env = \"SHOP_TOKEN\"\nheaders = {{X-Client = \"toolgate\"}}\n"
    );
    let project = Project::new(&config);
    project.write(
        ".toolgate/tools/stock.md",
        "---\nname: stock\ndescription: Stock of an item.\npermission: public\nread_only: true\nparameters:\n  sku: string\nhttp: {source: shop, path: \"/stock/{sku}\"}\n---\n",
    );
    project.write(
        ".toolgate/tools/order.md",
        "---\nname: order\ndescription: Order an item.\npermission: public\nparameters:\n  sku: string\n  count: integer\n  dry_run: {type: boolean, required: false}\nhttp: {source: shop, method: POST, path: /orders, query: [dry_run]}\n---\n",
    );
    let call = |args: &[&str]| {
        let mut command = project.command();
        command.args(args).env("SHOP_TOKEN", "shop-secret");
        tokio::task::block_in_place(|| project.run_with(&mut command, ""))
    };
    let stock = call(&["call", "stock", "--sku", "MUG-1"]).expect(0).json();
    assert_eq!(stock["path"], "/api/v2/stock/MUG-1");
    assert_eq!(stock["authorization"], "Bearer shop-secret");
    let order = call(&[
        "call",
        "order",
        "--sku",
        "MUG-1",
        "--count",
        "2",
        "--dry_run",
        "true",
    ])
    .expect(0)
    .json();
    assert_eq!(
        (order["method"].as_str(), order["path"].as_str()),
        (Some("POST"), Some("/api/v2/orders"))
    );
    assert_eq!(order["query"], "dry_run=true");
    assert_eq!(order["body"], json!({"sku": "MUG-1", "count": 2}));

    // A tool naming a source that is not there: its file, its line, the fix.
    project.write(
        ".toolgate/tools/price.md",
        "---\nname: price\ndescription: Price.\npermission: public\nparameters:\n  sku: string\nhttp:\n  source: shops\n  path: /price/{sku}\n---\n",
    );
    let listed = call(&["tools", "validate"]);
    let said = format!("{}{}", listed.stdout(), listed.stderr());
    assert!(said.contains("price.md:8"), "{said}");
    assert!(
        said.contains("`source: shops` names no source; define `[sources.shops]`"),
        "{said}"
    );
    assert!(said.contains("(defined: shop)"), "{said}");
}
