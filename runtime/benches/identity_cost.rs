//! What knowing the caller from an identity provider's token costs per request, counted by
//! valgrind's callgrind: `POST /tools/call` of `add` through the HTTP router, the caller
//! identified by
//!
//! - `static`: a configured caller's bearer token, compared in constant time (the floor);
//! - `rs256` / `es256`: an [`Identity`] with a JWT it checked before (remembered), the
//!   issuer's keys held (fetched by the first request, which cancels out);
//! - `opaque`: an [`Identity`] with an opaque token it introspected before;
//! - `rs256-new` / `es256-new`: a JWT never seen before on every request: its signature
//!   checked with the held keys, the claims mapped, the caller remembered.
//!
//! The issuer is served in process on 127.0.0.1 (metadata, keys, introspection); its keys
//! are throwaway ones made for this bench.
//!
//! `cargo bench -p toolgate --features oidc --bench identity_cost` (needs `valgrind`)

#[path = "common/callgrind.rs"]
mod callgrind;

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{Request, header};
use base64::Engine;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::identity::{Identity, Issuer};
use toolgate::prelude::*;
use tower::ServiceExt;

const REQUESTS: u64 = 500;
/// Requests of the rows whose every request brings a new token (signed before counting).
const NEW_TOKENS: u64 = 100;
const ROWS: [&str; 6] = [
    "static",
    "rs256",
    "es256",
    "opaque",
    "rs256-new",
    "es256-new",
];
const AUDIENCE: &str = "https://bench.example.com/tools";
const OPAQUE: &str = "an-opaque-token-the-issuer-knows-0123456789";

/// A throwaway RSA key (PKCS#1 DER), made for this bench only.
const RSA_KEY: &str = "MIIEpAIBAAKCAQEAnny3NU1VX1lrwzHKpCC66llbO58QAWgIoT/LnkGg1FwKMUZD16XOkW/p8hHDzNNQtjn6/wMQwI8vqdsnPSOQFpag3TCMq6D+W93u/YHuHR1I1BplQtLnMG2holbZNw6cKl8Wfijl4z4kHoG7NP9/2U93TXNuCPa6ikj/NY8kNEPj9XV85fEeLLwWMDsyyDDs+M+1isuqLONIVHfip+GjFXc4esqqwOtQghvWWRKUf1cHjUMdjBw3dMmNW0Mi01HsMglrfa8IZ6L29XJpBsNWvM8oArMt3WZNMAlFJ32+O7m96YwGM45x8SHnVI6lUk2fRT1MVeR3A57PNiLM+Q0tSQIDAQABAoIBABdX1bE5Xndwh4WEvizN8FHnjt85dqVKYikD6TT6RBq7Irout/vZfVMhCXNgx/bRcgwg/pXUaQF/pXzOXVltNUIKdg+WIMX/rK8xwUtf+YcawtkQuTTuNOSGZT3wrkYkdf5sqnazBeciRjYjFASClF1YzcDf3UdfNcr75PEJ0AKNeNwoFHEz79anvdfoiWbGY6I4EQxR3b8ebs4qNBUL3KQ5x9fnHJOqgbXrSbfEdKO/mBXKSBPz8JD9m4/M8YlIZVKkAofRgeXDrORDM6CRFUyC/Lpw/YZfyIZnBxYDZ+BeoKwfB5ssxc2QHSvXgJmAv+Ftedn58chPZsYjAPZqW80CgYEA116v9bS61iqs2ZQ2v68CkTs8Tng6QhsYKehvebt97hIq+V/znwjZV+H9B1dtr16lzAxUzTv25gg2GXq3sackNMdMoN9YSKn05vOx6tbO/t46vAcCVNvKOKP3eEh9lhkm+lNXvLNf1PpzVmXtEDOyx5TwUO4GHrGOA2oEebvvGQ0CgYEAvGLfKHBNSzHa0XKWlcQnZHTX60ToMc0qbjN2pOufMfh5BMYX8x7AHGd4vn7kK3nIgJmyyMqedxejWAu74VmjJEqDKCz5XqJJ2wvSHndUeoQ8OFXlX5BZuI3pTZiUw145tKEDRuqHEwai7jUc06z5J3IZgsGxmOmFld9kTf1fXi0CgYEAiYkSXZq45iQClkAsZmThAtYNQR9ONQEQgVLKPbcaSHqZrv8zmRARnCnZaGLQzPlob9JAJYBxv5zmz4aq4GyYlovfx6xZuK2wk/x0VkAvmFtartDbEE376gfr9Yh1ivEtDxdCJGN4g44dMcONjJc3SHU4srYOenNw+YUurn7xxdECgYEAkBQiTqBNTURM8cFs0BBcfGUsukBSQbyDRhNQG2QlticuD2ud55BOJ6svWqpbwbB7m3dxmEX3GmhWwkD/KaPPtTLTysdS1YDTcZdB1ZE4aBd4ozF2ozcYl6DZnUIkDKOlCLPYeMVoFzINLJgseuwhBn0qa6nONX/sbiqTYV52MOUCgYB/ZMF+nVVo65Mche8X7r4AbTWrb37Oio5UMrsaFB7pvJ1yaRXvcNkEXJ+wHLsppt4kdOv2F62qUwT0paiGdY0TTFi+EikIsJEw84ytDFrLm++74hatA5ujf30hEh4ZcSlxsbQCfx66f680A7mSH/IBliMFy0xegX4BlTtjPBq40Q==";
/// A throwaway P-256 key (PKCS#8 DER), made for this bench only.
const EC_KEY: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg8gQwkzwEBPOzg5IyPVetDrLy7QQXjEYHgXFeJhoOTgyhRANCAAQnhiEOx+E4okyTgPjHKgqzs4B9i2havfL4l0GGoTuAh/eZhyFsnxF2BiJ2HzHQYLPtXNdyiTd4fO5pn0RVsIBz";

/// Add two numbers.
#[tool(permission = "staff", read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    match callgrind::counted_run() {
        Some((row, count)) => serve(&row, count),
        None => report(),
    }
}

fn report() {
    let program = std::env::current_exe().expect("the bench's own path");
    let floor = callgrind::per_call(&program, "static", REQUESTS);
    println!("instructions per request (POST /tools/call add, through the router):");
    println!("  static token: {floor}");
    for row in &ROWS[1..] {
        let requests = if row.ends_with("-new") {
            NEW_TOKENS
        } else {
            REQUESTS
        };
        let counted = callgrind::per_call(&program, row, requests);
        println!(
            "  {row}: {counted} (+{} over a static token, {:.2}×)",
            counted.saturating_sub(floor),
            counted as f64 / floor as f64
        );
    }
}

fn key(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

/// The issuer: its metadata, its keys and its introspection endpoint, on a free port.
async fn issuer() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let jwk = |encoding: &EncodingKey, alg, kid: &str| {
        let mut jwk = Jwk::from_encoding_key(encoding, alg).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        jwk
    };
    let keys = json!({"keys": [
        jwk(&EncodingKey::from_rsa_der(&key(RSA_KEY)), Algorithm::RS256, "rsa"),
        jwk(&EncodingKey::from_ec_der(&key(EC_KEY)), Algorithm::ES256, "ec"),
    ]});
    let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks"),
        "introspection_endpoint": format!("{url}/introspect")});
    let active = json!({"active": true, "sub": "ana", "groups": ["vets"], "iss": url,
        "exp": now() + 3600, "aud": AUDIENCE});
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || async move { axum::Json(metadata) }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || async move { axum::Json(keys) }),
        )
        .route(
            "/introspect",
            axum::routing::post(move || async move { axum::Json(active) }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn token(issuer: &str, alg: Algorithm, n: u64) -> String {
    let (encoding, kid) = match alg {
        Algorithm::RS256 => (EncodingKey::from_rsa_der(&key(RSA_KEY)), "rsa"),
        _ => (EncodingKey::from_ec_der(&key(EC_KEY)), "ec"),
    };
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    let claims: Value = json!({"iss": issuer, "aud": AUDIENCE, "sub": "ana", "groups": ["vets"],
        "iat": now(), "exp": now() + 3600, "scope": "tools:call", "jti": n});
    jsonwebtoken::encode(&header, &claims, &encoding).unwrap()
}

/// Answers `count` requests of `row` on a single-threaded runtime.
fn serve(row: &str, count: u64) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::builder()
        .roles(["public", "staff"])
        .build()
        .unwrap();
    let (app, tokens) = runtime.block_on(async {
        if row == "static" {
            let authenticate = |parts: &Parts| -> Result<Caller, AuthError> {
                use subtle::ConstantTimeEq;
                let expected = b"Bearer a-static-token-of-forty-bytes-0123456";
                let presented = parts
                    .headers
                    .get(header::AUTHORIZATION)
                    .map(|v| v.as_bytes());
                match presented.is_some_and(|presented| bool::from(presented.ct_eq(expected))) {
                    true => Ok(Caller::new("ana", "staff")),
                    false => Err(AuthError::unauthenticated("unknown token")),
                }
            };
            let app = router(registry, authenticate, HttpOptions::default());
            return (
                app,
                vec!["a-static-token-of-forty-bytes-0123456".to_owned()],
            );
        }
        let issuer = issuer().await;
        let mut trusted = Issuer::new(&issuer);
        if row == "opaque" {
            trusted = trusted.introspection("bench", "bench-secret");
        }
        let identity = Identity::builder()
            .issuer(trusted)
            .audience(AUDIENCE)
            .role_from_claim("groups", "vets", "staff")
            .build(registry.roles())
            .unwrap();
        let signed = |alg, count| (0..count).map(|n| token(&issuer, alg, n)).collect();
        let tokens = match row {
            "rs256" => signed(Algorithm::RS256, 1),
            "es256" => signed(Algorithm::ES256, 1),
            "rs256-new" => signed(Algorithm::RS256, count),
            "es256-new" => signed(Algorithm::ES256, count),
            _ => vec![OPAQUE.to_owned()],
        };
        (router(registry, identity, HttpOptions::default()), tokens)
    });
    let body = r#"{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}"#;
    callgrind::counting_starts();
    runtime.block_on(async {
        for n in 0..count as usize {
            let token = &tokens[n % tokens.len()];
            let request = Request::post("/tools/call")
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::AUTHORIZATION, format!("Bearer {token}"))
                .body(Body::from(body))
                .unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            assert!(
                response.status().is_success(),
                "{row}: {}",
                response.status()
            );
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            std::hint::black_box(bytes);
        }
    });
}
