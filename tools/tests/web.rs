//! `fetch_webpage` against an HTTP server the test starts on 127.0.0.1 (explicitly allowed):
//! text and links, redirects (also to refused addresses), oversized bodies, slow servers,
//! and the default refusal of loopback.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use serde_json::{Value, json};
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate_tools::web::{self, WebConfig};

const PAGE: &str = r#"<html><head><title>Clinic</title></head><body>
<h1>Happy Paws</h1><p>Open <b>every</b> weekday.</p>
<a href="/services">Our services</a> <a href="https://example.org/about">About us</a>
<script>var secret = 1;</script></body></html>"#;

async fn server() -> String {
    let app = Router::new()
        .route(
            "/page",
            get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }),
        )
        .route("/plain", get(|| async { "just text" }))
        .route("/big", get(|| async { "x".repeat(3 * 1024 * 1024) }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }),
        )
        .route("/to-page", get(|| async { Redirect::temporary("/page") }))
        .route(
            "/to-metadata",
            get(|| async { Redirect::temporary("http://169.254.169.254/latest/meta-data/") }),
        )
        .route(
            "/to-private",
            get(|| async { Redirect::temporary("http://10.0.0.1/admin") }),
        )
        .route(
            "/to-file",
            get(|| async { Redirect::temporary("file:///etc/passwd") }),
        )
        .route("/loop", get(|| async { Redirect::temporary("/loop") }))
        .route(
            "/image",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "image/png")],
                    vec![0x89u8, 0x50, 0x4e, 0x47],
                )
            }),
        )
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, "no such page").into_response() }),
        );
    serve(app).await
}

/// Serves `app` on a free loopback port; its base URL.
async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn registry(config: WebConfig) -> Registry {
    Registry::builder()
        .roles(["user"])
        .linked_tools(false)
        .policy_mode(PolicyMode::Auto)
        .state(config)
        .tool(web::fetch_webpage_tool().permission("user"))
        .build()
        .unwrap()
}

fn loopback_allowed() -> WebConfig {
    WebConfig {
        timeout: Duration::from_secs(2),
        max_bytes: 1024 * 1024,
        ..WebConfig::default()
    }
    .allow_network("127.0.0.0/8")
    .unwrap()
}

async fn fetch(registry: &Registry, arguments: Value) -> Result<Value, ToolError> {
    registry
        .call(
            &Caller::new("u", "user"),
            ToolCall::new("1", "fetch_webpage", arguments),
        )
        .await
        .result
}

#[tokio::test]
async fn text_and_links_of_a_page() {
    let base = server().await;
    let registry = registry(loopback_allowed());
    let page = fetch(&registry, json!({"url": format!("{base}/page")}))
        .await
        .unwrap();
    let text = page["text"].as_str().unwrap();
    assert!(
        text.contains("Happy Paws") && text.contains("Open **every** weekday."),
        "{text}"
    );
    assert!(!text.contains("secret"), "scripts are not text: {text}");
    assert_eq!(page["status"], 200);
    let links = fetch(
        &registry,
        json!({"url": format!("{base}/page"), "extract": "links"}),
    )
    .await
    .unwrap();
    assert_eq!(
        links["links"],
        json!([{"url": format!("{base}/services"), "text": "Our services"}, {"url": "https://example.org/about", "text": "About us"}])
    );
    let plain = fetch(&registry, json!({"url": format!("{base}/plain")}))
        .await
        .unwrap();
    assert_eq!(plain["text"], "just text");
    let image = fetch(&registry, json!({"url": format!("{base}/image")}))
        .await
        .unwrap();
    assert_eq!(
        (image["binary"].clone(), image["bytes"].clone()),
        (json!(true), json!(4))
    );
    let missing = fetch(&registry, json!({"url": format!("{base}/missing")}))
        .await
        .unwrap();
    assert_eq!(missing["status"], 404);
}

#[tokio::test]
async fn redirects_are_followed_and_checked_at_every_hop() {
    let base = server().await;
    let registry = registry(loopback_allowed());
    let followed = fetch(&registry, json!({"url": format!("{base}/to-page")}))
        .await
        .unwrap();
    assert_eq!(followed["url"], format!("{base}/page"));
    for (path, shown) in [
        ("/to-metadata", "169.254.169.254"),
        ("/to-private", "10.0.0.1"),
    ] {
        let error = fetch(&registry, json!({"url": format!("{base}{path}")}))
            .await
            .unwrap_err();
        assert_eq!(error.code.as_str(), "address_not_allowed", "{path}");
        assert!(error.message.contains(shown), "{}", error.message);
    }
    let error = fetch(&registry, json!({"url": format!("{base}/to-file")}))
        .await
        .unwrap_err();
    assert_eq!(error.code.as_str(), "address_not_allowed");
    let error = fetch(&registry, json!({"url": format!("{base}/loop")}))
        .await
        .unwrap_err();
    assert_eq!(error.code.as_str(), "too_many_redirects");
}

#[tokio::test]
async fn oversized_bodies_are_cut_and_slow_servers_time_out() {
    let base = server().await;
    let registry = registry(loopback_allowed());
    let big = fetch(&registry, json!({"url": format!("{base}/big")}))
        .await
        .unwrap();
    assert_eq!(
        (big["bytes"].clone(), big["truncated"].clone()),
        (json!(1024 * 1024), json!(true))
    );
    assert_eq!(big["text"].as_str().unwrap().len(), 1024 * 1024);
    let slow = fetch(&registry, json!({"url": format!("{base}/slow")}))
        .await
        .unwrap_err();
    assert_eq!(slow.code, ErrorCode::Timeout);
}

#[tokio::test]
async fn loopback_private_and_link_local_addresses_are_refused_by_default() {
    let base = server().await;
    let registry = registry(WebConfig::default());
    let port = base.rsplit(':').next().unwrap();
    for url in [
        format!("{base}/page"),
        format!("http://localhost:{port}/page"),
        format!("http://[::1]:{port}/page"),
        format!("http://[::ffff:127.0.0.1]:{port}/page"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.1.2.3/".to_owned(),
        "http://192.168.0.1/".to_owned(),
        "http://0.0.0.0/".to_owned(),
    ] {
        let error = fetch(&registry, json!({ "url": url })).await.unwrap_err();
        assert_eq!(
            error.code.as_str(),
            "address_not_allowed",
            "{url}: {}",
            error.message
        );
    }
    for url in ["ftp://example.org/file", "file:///etc/passwd", "not a url"] {
        let error = fetch(&registry, json!({ "url": url })).await.unwrap_err();
        assert!(
            matches!(
                error.code.as_str(),
                "address_not_allowed" | "invalid_arguments"
            ),
            "{url}: {}",
            error.code
        );
    }
}

/// Set in the child process that `proxies_from_the_environment_are_never_used` starts.
const PROXY_CHILD: &str = "TOOLGATE_TEST_PROXY_CHILD";

/// A "proxy" that answers every request itself, as a hostile or misconfigured one could.
async fn proxy() -> String {
    serve(Router::new().fallback(|| async { "answered by the proxy" })).await
}

#[tokio::test]
async fn proxies_from_the_environment_are_never_used() {
    if std::env::var_os(PROXY_CHILD).is_some() {
        // In the child, every proxy variable points at the proxy: the fetch must still go to
        // the checked address itself.
        let base = server().await;
        let registry = registry(loopback_allowed());
        for url in [format!("{base}/plain"), format!("{base}/page")] {
            let page = fetch(&registry, json!({"url": url})).await.unwrap();
            let text = page["text"].as_str().unwrap();
            assert!(
                !text.contains("proxy"),
                "{url} went through the proxy: {text}"
            );
        }
        return;
    }
    // Environment variables are process-wide: the check runs in a child process of its own.
    let proxy = proxy().await;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "proxies_from_the_environment_are_never_used",
            "--nocapture",
        ])
        .env(PROXY_CHILD, "1");
    for name in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        child.env(name, &proxy);
    }
    child.env_remove("NO_PROXY").env_remove("no_proxy");
    let output = child.output().await.unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        printed.contains("1 passed"),
        "the child ran the check: {printed}"
    );
}

#[tokio::test]
async fn ipv6_forms_of_loopback_and_private_addresses_are_refused() {
    let registry = registry(WebConfig::default());
    for url in [
        "http://[::127.0.0.1]/",
        "http://[::ffff:0:7f00:1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fec0::1]/",
        "http://[64:ff9b::a00:1]/",
        "http://[2002:7f00:1::1]/",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    ] {
        let refused = fetch(&registry, json!({"url": url})).await.unwrap_err();
        assert_eq!(refused.code.as_str(), "address_not_allowed", "{url}");
    }
}
