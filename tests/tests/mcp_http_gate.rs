//! The MCP endpoint over HTTP: an unknown token gets `401` with `WWW-Authenticate` (MCP's
//! authorization spec), and the `Host` guard is on by default and configurable.

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{Request, StatusCode, header};
use serde_json::json;
use toolgate::http::AuthError;
use toolgate::mcp::{McpHttpOptions, http_service, http_service_with};
use toolgate::{Caller, Registry};
use tower::ServiceExt;

fn authenticate(parts: &Parts) -> Result<Caller, AuthError> {
    match parts
        .headers
        .get("authorization")
        .map(|value| value.as_bytes())
    {
        None => Ok(Caller::new("anonymous", "public")),
        Some(b"Bearer good") => Ok(Caller::new("dr-lee", "staff")),
        Some(b"Bearer banned") => Err(AuthError::forbidden("this account is suspended")),
        Some(_) => Err(AuthError::unauthenticated("unknown token")),
    }
}

fn registry() -> Registry {
    Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .build()
        .unwrap()
}

fn initialize(host: &str, token: Option<&str>) -> Request<Body> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    });
    let mut request = Request::post("/")
        .header(header::HOST, host)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    request.body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn an_unknown_token_gets_401_with_a_bearer_challenge() {
    let options = McpHttpOptions {
        resource_metadata: Some(
            "https://mcp.example.com/.well-known/oauth-protected-resource".into(),
        ),
        ..McpHttpOptions::default()
    };
    let service = http_service_with(registry(), authenticate, options);
    let refused = service
        .clone()
        .oneshot(initialize("localhost", Some("stolen")))
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()[header::WWW_AUTHENTICATE]
        .to_str()
        .unwrap();
    assert_eq!(
        challenge,
        "Bearer error=\"invalid_token\", resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource\""
    );
    let forbidden = service
        .clone()
        .oneshot(initialize("localhost", Some("banned")))
        .await
        .unwrap();
    assert_eq!(forbidden.status(), StatusCode::FORBIDDEN);
    assert!(
        forbidden.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .contains("insufficient_scope")
    );
    for token in [None, Some("good")] {
        let accepted = service
            .clone()
            .oneshot(initialize("localhost", token))
            .await
            .unwrap();
        assert_eq!(accepted.status(), StatusCode::OK, "{token:?}");
    }
}

#[tokio::test]
async fn other_hosts_are_refused_by_default_and_answered_once_named() {
    let guarded = http_service(registry(), authenticate);
    let refused = guarded
        .oneshot(initialize("tools.example.com", None))
        .await
        .unwrap();
    assert!(refused.status().is_client_error(), "{}", refused.status());
    let options = McpHttpOptions {
        allowed_hosts: vec!["tools.example.com".into()],
        ..McpHttpOptions::default()
    };
    let open = http_service_with(registry(), authenticate, options);
    let answered = open
        .clone()
        .oneshot(initialize("tools.example.com", None))
        .await
        .unwrap();
    assert_eq!(answered.status(), StatusCode::OK);
    let other = open
        .oneshot(initialize("evil.example.net", None))
        .await
        .unwrap();
    assert!(other.status().is_client_error());
}
