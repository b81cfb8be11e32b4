//! `check_service_health` over HTTP and TCP endpoints the test starts, and `restart_service`
//! through configured commands.

use axum::http::StatusCode;
use axum::routing::get;
use serde_json::json;
use toolgate::Risk;
use toolgate_tools::services::{
    HealthCheck, ServicesConfig, check_service_health_tool, restart_service_tool,
};

use crate::{Tools, code};

async fn http_server() -> String {
    let app = axum::Router::new()
        .route("/health", get(|| async { "ok" }))
        .route(
            "/sick",
            get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance") }),
        )
        .route("/teapot", get(|| async { StatusCode::IM_A_TEAPOT }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn tools(marker: &std::path::Path) -> (Tools, tokio::net::TcpListener) {
    let base = http_server().await;
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = ServicesConfig::new()
        .service(
            "api",
            HealthCheck::Http {
                url: format!("{base}/health"),
                expect_status: None,
            },
        )
        .service(
            "worker",
            HealthCheck::Http {
                url: format!("{base}/sick"),
                expect_status: None,
            },
        )
        .service(
            "kettle",
            HealthCheck::Http {
                url: format!("{base}/teapot"),
                expect_status: Some(418),
            },
        )
        .service(
            "db",
            HealthCheck::Tcp {
                address: tcp.local_addr().unwrap().to_string(),
            },
        )
        .service(
            "cache",
            HealthCheck::Tcp {
                address: format!("127.0.0.1:{}", closed_port()),
            },
        )
        .restart_with("api", "touch", [marker.display().to_string()])
        .restart_with(
            "worker",
            "sh",
            [
                "-c",
                "echo stopping; echo 'unit worker.service not found' >&2; exit 5",
            ],
        );
    let tools = Tools::new(
        vec![
            check_service_health_tool().permission("user"),
            restart_service_tool().permission("user"),
        ],
        |builder| builder.state(config),
    );
    (tools, tcp)
}

#[tokio::test]
async fn health_is_up_or_down_with_a_reason() {
    let folder = tempfile::tempdir().unwrap();
    let (tools, _tcp) = tools(&folder.path().join("restarted")).await;
    let api = tools
        .call("check_service_health", json!({"service": "api"}))
        .await
        .unwrap();
    assert_eq!(
        (api["status"].clone(), api["http_status"].clone()),
        (json!("up"), json!(200))
    );
    assert!(api["latency_ms"].as_f64().unwrap() >= 0.0);
    let worker = tools
        .call("check_service_health", json!({"service": "worker"}))
        .await
        .unwrap();
    assert_eq!(worker["status"], "down");
    assert!(
        worker["reason"].as_str().unwrap().contains("503"),
        "{worker}"
    );
    let kettle = tools
        .call("check_service_health", json!({"service": "kettle"}))
        .await
        .unwrap();
    assert_eq!(kettle["status"], "up", "the expected status is what counts");
    let db = tools
        .call("check_service_health", json!({"service": "db"}))
        .await
        .unwrap();
    assert_eq!(db["status"], "up");
    let cache = tools
        .call("check_service_health", json!({"service": "cache"}))
        .await
        .unwrap();
    assert_eq!(cache["status"], "down");
    assert!(
        cache["reason"].as_str().unwrap().contains("refused"),
        "{cache}"
    );
    let unknown = tools
        .call("check_service_health", json!({"service": "mail"}))
        .await
        .unwrap_err();
    assert_eq!(unknown.code.as_str(), "unknown_service");
    assert!(unknown.message.contains("api, cache, db, kettle, worker"));
}

#[tokio::test]
async fn restarts_run_the_configured_command() {
    let folder = tempfile::tempdir().unwrap();
    let marker = folder.path().join("restarted");
    let (tools, _tcp) = tools(&marker).await;
    let restarted = tools
        .call("restart_service", json!({"service": "api"}))
        .await
        .unwrap();
    assert!(marker.exists(), "the command ran");
    assert_eq!(restarted["health_after"]["status"], "up");
    let failed = tools
        .call("restart_service", json!({"service": "worker"}))
        .await
        .unwrap_err();
    assert_eq!(failed.code.as_str(), "execution_failed");
    assert!(
        failed.message.contains("unit worker.service not found"),
        "{}",
        failed.message
    );
    assert_eq!(
        code(
            tools
                .call("restart_service", json!({"service": "db"}))
                .await
        ),
        "not_supported"
    );
    let restart = tools.definition("restart_service");
    assert_eq!(restart.risk, Risk::High);
    assert!(restart.hints.destructive);
}
