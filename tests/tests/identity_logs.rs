//! No part of an identity provider's token, nor a client secret, reaches the log, even with
//! every dependency logging at TRACE. In a test binary of its own: its log is captured with
//! a subscriber of its thread, which other tests running beside it would leave unheard.

mod identity_world;

use reqwest::StatusCode;
use serde_json::json;

use identity_world::*;

#[test]
fn no_part_of_a_token_or_a_client_secret_is_logged_even_at_trace() {
    let filter = toolgate::logging::keeping_secrets("trace");
    let (tokens, log) = toolgate_tests::capture_async(&filter, async {
        let world = world(|identity| identity).await;
        let good = world.token("svc-vet").await;
        assert_eq!(
            world.get("/api/me", Some(&good)).await.status,
            StatusCode::OK
        );
        assert_eq!(world.mcp_tool_names(&good).await.len(), 3);
        world
            .call(&good, "patient_record", json!({"patient": "Rex"}))
            .await;
        let expired = world
            .signed(world.claims(json!({"exp": now() - 3600})), json!({}), false)
            .await;
        assert_eq!(
            world.get("/api/me", Some(&expired)).await.status,
            StatusCode::UNAUTHORIZED
        );
        let opaque = world.token_for("svc-vet", "tools:call", None).await;
        introspecting(&world).caller(&opaque).await.unwrap();
        vec![good, expired, opaque]
    });
    // The dependencies that carry tokens and secrets (the HTTP client and server) logged.
    assert!(
        log.contains("hyper_util::client") && log.contains("axum::serve"),
        "{log}"
    );
    for token in &tokens {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!log.contains(signature), "a token's signature was logged");
    }
    assert!(
        !log.contains("resource-server-secret"),
        "a client secret was logged"
    );
}
