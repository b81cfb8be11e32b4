//! `web_search` against a loopback server answering as SearXNG's JSON API and Brave Search's
//! API answer.

use axum::Json;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::HashMap;
use toolgate_tools::web::{SearchBackend, WebConfig, WebSearchConfig, web_search_tool};

use crate::{Tools, code};

async fn searxng(Query(query): Query<HashMap<String, String>>) -> Result<Json<Value>, StatusCode> {
    if query.get("format").map(String::as_str) != Some("json") {
        return Err(StatusCode::FORBIDDEN);
    }
    let q = query.get("q").cloned().unwrap_or_default();
    let results: Vec<Value> = (1..=12)
        .map(|n| json!({
            "url": format!("https://example.org/{n}"), "title": format!("{q} result {n}"),
            "content": format!("About <span class=\"highlight\">{q}</span>, part {n}."),
            "engine": "duckduckgo", "engines": ["duckduckgo"], "positions": [n], "score": 1.0 / f64::from(n), "category": "general",
        }))
        .chain([json!({"title": "no address", "content": "skipped"})])
        .collect();
    Ok(Json(
        json!({"query": q, "number_of_results": 0, "results": results, "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}),
    ))
}

async fn brave(
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Value>, StatusCode> {
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some(env!("CARGO_PKG_NAME"))
    {
        return Err(StatusCode::UNAUTHORIZED);
    }
    let count: usize = query
        .get("count")
        .and_then(|c| c.parse().ok())
        .unwrap_or(20);
    let results: Vec<Value> = (1..=count)
        .map(|n| json!({
            "title": format!("Brave {n}"), "url": format!("https://brave.example/{n}"), "is_source_local": false, "is_source_both": false,
            "description": format!("The <strong>{}</strong> answer {n}", query["q"]), "language": "en", "family_friendly": true, "type": "search_result",
        }))
        .collect();
    Ok(Json(
        json!({"query": {"original": query["q"]}, "mixed": {"type": "mixed", "main": []}, "type": "search", "web": {"type": "search", "results": results, "family_friendly": true}}),
    ))
}

async fn server() -> String {
    let app = axum::Router::new()
        .route("/searx/search", get(searxng))
        .route("/brave", get(brave))
        .route(
            "/broken/search",
            get(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

fn tools(base: &str, allow_loopback: bool) -> Tools {
    let mut web = WebConfig::default();
    if allow_loopback {
        web = web.allow_network("127.0.0.0/8").unwrap();
    }
    let config = WebSearchConfig::new(web)
        .backend(
            "searx",
            SearchBackend::Searxng {
                url: format!("{base}/searx"),
            },
        )
        // Cargo sets CARGO_PKG_NAME for the tests it runs: a key the server knows.
        .backend(
            "brave",
            SearchBackend::Brave {
                url: format!("{base}/brave"),
                api_key_env: "CARGO_PKG_NAME".into(),
            },
        )
        .backend(
            "brave_without_key",
            SearchBackend::Brave {
                url: format!("{base}/brave"),
                api_key_env: "TOOLGATE_TEST_UNSET_KEY".into(),
            },
        )
        .backend(
            "broken",
            SearchBackend::Searxng {
                url: format!("{base}/broken"),
            },
        );
    Tools::new(vec![web_search_tool().permission("user")], |builder| {
        builder.state(config)
    })
}

#[tokio::test]
async fn searxng_results_are_titles_addresses_and_plain_snippets() {
    let base = server().await;
    let tools = tools(&base, true);
    let found = tools
        .call(
            "web_search",
            json!({"query": "rust tools", "max_results": 3}),
        )
        .await
        .unwrap();
    assert_eq!(
        found["provider"], "searx",
        "the first backend is the default"
    );
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[0],
        json!({"title": "rust tools result 1", "url": "https://example.org/1", "snippet": "About rust tools, part 1."})
    );
    let all = tools
        .call("web_search", json!({"query": "x", "max_results": 20}))
        .await
        .unwrap();
    assert_eq!(
        all["results"].as_array().unwrap().len(),
        12,
        "a result without an address is left out"
    );
    let definition = tools.definition("web_search");
    assert!(definition.hints.read_only && definition.hints.open_world);
}

#[tokio::test]
async fn brave_is_asked_with_its_key_from_the_environment() {
    let base = server().await;
    let tools = tools(&base, true);
    let missing = tools
        .call(
            "web_search",
            json!({"query": "q", "provider": "brave_without_key"}),
        )
        .await
        .unwrap_err();
    assert_eq!(missing.code.as_str(), "not_configured");
    assert!(missing.message.contains("TOOLGATE_TEST_UNSET_KEY"));
    let found = tools
        .call(
            "web_search",
            json!({"query": "ferris", "provider": "brave", "max_results": 4}),
        )
        .await
        .unwrap();
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "the count is asked of the backend");
    assert_eq!(
        results[3],
        json!({"title": "Brave 4", "url": "https://brave.example/4", "snippet": "The ferris answer 4"})
    );
}

#[tokio::test]
async fn mistakes_and_refusals_have_their_codes() {
    let base = server().await;
    let tools = tools(&base, true);
    let unknown = tools
        .call("web_search", json!({"query": "q", "provider": "google"}))
        .await
        .unwrap_err();
    assert_eq!(unknown.code.as_str(), "unknown_provider");
    assert!(
        unknown
            .message
            .contains("brave, brave_without_key, broken, searx"),
        "{}",
        unknown.message
    );
    assert_eq!(
        code(
            tools
                .call("web_search", json!({"query": "q", "provider": "broken"}))
                .await
        ),
        "search_failed"
    );
    assert_eq!(
        code(
            tools
                .call("web_search", json!({"query": "q", "max_results": 21}))
                .await
        ),
        "invalid_arguments"
    );
    assert_eq!(
        code(tools.call("web_search", json!({"query": ""})).await),
        "invalid_arguments"
    );
    let closed = self::tools(&base, false);
    let refused = closed
        .call("web_search", json!({"query": "q"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code.as_str(), "address_not_allowed");
}
