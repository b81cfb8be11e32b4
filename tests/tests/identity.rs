//! Callers identified by a real OpenID provider's tokens (`oidc-provider`, started on
//! 127.0.0.1 by each test): over HTTP, MCP over HTTP and in process, with the provider's
//! own tokens, tokens it signed with claims of the test's choosing, and forgeries.

mod identity_world;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use toolgate::identity::{Identity, IdentityError, Issuer};

use identity_world::*;

#[tokio::test]
async fn the_providers_tokens_reach_tools_with_the_role_their_claims_map_to() {
    let world = world(|identity| identity).await;
    let vet = world.token("svc-vet").await;
    let owner = world.token("svc-owner").await;
    let admin = world.token("svc-admin").await;

    let me = world.get("/api/me", Some(&vet)).await;
    assert_eq!(me.body["id"], "svc-vet", "{}", me.body);
    assert_eq!(me.body["role"], "staff");
    // Both `admins` and `vets` match: the highest role wins.
    assert_eq!(
        world.get("/api/me", Some(&admin)).await.body["role"],
        "admin"
    );

    assert_eq!(
        world.tool_names(&vet).await,
        ["clinic_hours", "my_pets", "patient_record"]
    );
    assert_eq!(world.tool_names(&owner).await, ["clinic_hours", "my_pets"]);
    assert_eq!(
        world.mcp_tool_names(&vet).await.len(),
        3,
        "MCP lists the staff tools"
    );
    let mut over_mcp = world.mcp_tool_names(&owner).await;
    over_mcp.sort();
    assert_eq!(over_mcp, ["clinic_hours", "my_pets"]);

    let record = world
        .call(&vet, "patient_record", json!({"patient": "Rex"}))
        .await;
    assert_eq!(record.body["result"], "record of Rex", "{}", record.body);
    let pets = world.call(&owner, "my_pets", json!({})).await;
    assert_eq!(pets.body["result"], "the pets of svc-owner");
    // Above the owner's role: answered exactly as a tool that does not exist.
    let hidden = world
        .call(&owner, "patient_record", json!({"patient": "Rex"}))
        .await;
    let missing = world.call(&owner, "no_such_tool", json!({})).await;
    assert_eq!(hidden.body["error"]["code"], "unknown_tool");
    assert_eq!(
        hidden.body["error"]["message"]
            .as_str()
            .unwrap()
            .replace("patient_record", "X"),
        missing.body["error"]["message"]
            .as_str()
            .unwrap()
            .replace("no_such_tool", "X")
    );

    // The audit names the caller and the token's issuer, nothing of the token.
    let history = world.registry.history("svc-vet", 5).await.unwrap();
    assert_eq!(
        history[0].issuer.as_deref(),
        Some(world.provider.issuer.as_str())
    );
    let recorded = serde_json::to_string(&history).unwrap();
    assert!(!recorded.contains(&vet), "the token reached the audit");
}

#[tokio::test]
async fn the_resource_publishes_its_metadata_and_challenges_name_it() {
    let world = world(|identity| identity.scope_caps_role("tools:call", "admin")).await;
    let metadata = world
        .get("/.well-known/oauth-protected-resource/mcp", None)
        .await;
    assert_eq!(metadata.status, StatusCode::OK);
    assert_eq!(metadata.body["resource"], world.resource);
    assert_eq!(
        metadata.body["authorization_servers"],
        json!([world.provider.issuer])
    );
    assert_eq!(metadata.body["scopes_supported"], json!(["tools:call"]));
    let url = format!("{}/.well-known/oauth-protected-resource/mcp", world.app);

    for path in ["/api/tools", "/mcp"] {
        let refused = if path == "/mcp" {
            let response = world
                .http
                .post(format!("{}{path}", world.app))
                .header("accept", "application/json, text/event-stream")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
                .send()
                .await
                .unwrap();
            answer(response).await
        } else {
            world.get(path, None).await
        };
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{path}");
        // No token: a challenge without an error (RFC 6750 §3.1).
        assert_eq!(
            refused.challenge,
            format!("Bearer scope=\"tools:call\", resource_metadata=\"{url}\""),
            "{path}"
        );
    }
}

#[tokio::test]
async fn expired_early_foreign_and_misdirected_tokens_are_refused() {
    let world = world(|identity| identity).await;
    let unauthorized = StatusCode::UNAUTHORIZED;
    let past = json!({"exp": now() - 3600, "iat": now() - 7200});
    let expired = world.signed(world.claims(past), json!({}), false).await;
    world
        .refuses(&expired, unauthorized, "invalid_token", "expired")
        .await;
    let future = json!({"nbf": now() + 3600});
    let early = world.signed(world.claims(future), json!({}), false).await;
    world
        .refuses(&early, unauthorized, "invalid_token", "not valid yet")
        .await;
    let evil = json!({"iss": "https://login.evil.example"});
    let foreign = world.signed(world.claims(evil), json!({}), false).await;
    world
        .refuses(&foreign, unauthorized, "invalid_token", "issuer")
        .await;
    // A real token of the provider, minted for another service.
    let elsewhere = world
        .token_for("svc-vet", "tools:call", Some(ELSEWHERE))
        .await;
    world
        .refuses(
            &elsewhere,
            unauthorized,
            "invalid_token",
            "another resource",
        )
        .await;
    world.still_serves().await;
}

#[tokio::test]
async fn forged_tokens_are_refused_and_no_key_they_point_at_is_fetched() {
    let world = world(|identity| identity).await;
    let unauthorized = StatusCode::UNAUTHORIZED;
    // `alg: none`: the provider's real claims, no signature.
    let real = world.token("svc-vet").await;
    let claims_part = real.split('.').nth(1).unwrap();
    let unsigned = format!(
        "{}.{claims_part}.",
        base64url(r#"{"alg":"none","typ":"at+jwt"}"#)
    );
    world
        .refuses(&unsigned, unauthorized, "invalid_token", "`none`")
        .await;

    // HS256 with the provider's public key as the secret.
    let public = world
        .get_json(&format!("{}/__test/public-key", world.provider.issuer))
        .await;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = public["jwk"]["kid"].as_str().map(str::to_owned);
    let pem = public["pem"].as_str().unwrap().as_bytes();
    let secret = jsonwebtoken::EncodingKey::from_secret(pem);
    let confused = jsonwebtoken::encode(&header, &world.claims(json!({})), &secret).unwrap();
    world
        .refuses(&confused, unauthorized, "invalid_token", "HS256")
        .await;

    // Signed by a key the issuer does not publish, its header pointing at the attacker's keys.
    let jku = format!("{}/__test/rogue-jwks", world.provider.issuer);
    let pointing = json!({"jku": jku, "x5u": jku});
    let rogue = world.signed(world.claims(json!({})), pointing, true).await;
    world
        .refuses(&rogue, unauthorized, "invalid_token", "does not publish")
        .await;
    assert_eq!(world.counts().await["rogue_jwks"], 0, "a jku was followed");

    // Too long to read: refused unread; too long for HTTP: refused by the server.
    let long = format!("{}.{}.{}", "a".repeat(10_000), "b".repeat(10_000), "c");
    world
        .refuses(&long, unauthorized, "invalid_token", "over the limit")
        .await;
    let huge = world.get("/api/me", Some(&"x".repeat(1 << 20))).await;
    assert!(huge.status.is_client_error(), "{}", huge.status);
    world.still_serves().await;
}

#[tokio::test]
async fn valid_tokens_without_a_role_or_the_scope_needed_get_403() {
    let world = world(|identity| identity.require_scope("tools:call")).await;
    let forbidden = StatusCode::FORBIDDEN;
    let nobody = world.token("svc-nobody").await;
    world
        .refuses(&nobody, forbidden, "insufficient_scope", "no role")
        .await;
    let reader = world
        .token_for("svc-vet", "tools:read", Some(&world.resource))
        .await;
    world
        .refuses(&reader, forbidden, "insufficient_scope", "tools:call")
        .await;
    let challenge = world.get("/api/me", Some(&reader)).await.challenge;
    assert_eq!(
        challenge.split(", ").nth(1),
        Some("scope=\"tools:call\""),
        "{challenge}"
    );
    world.still_serves().await;
}

#[tokio::test]
async fn a_key_rotation_is_honoured_without_a_restart_and_a_removed_key_stops_working() {
    let world = world(|identity| {
        identity
            .key_refetch_interval(Duration::from_millis(200))
            .key_max_age(Duration::from_millis(800))
    })
    .await;
    let before = world.token("svc-vet").await;
    assert_eq!(
        world.get("/api/me", Some(&before)).await.status,
        StatusCode::OK
    );

    // A new key signs; the old one is still published.
    world
        .test_route("rotate", json!({"keep_previous": true}))
        .await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let after = world.token("svc-vet").await;
    assert_ne!(kid(&before), kid(&after));
    assert_eq!(
        world.get("/api/me", Some(&after)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        world.get("/api/me", Some(&before)).await.status,
        StatusCode::OK
    );

    // The old key is withdrawn: once the held keys are old, tokens it signed are refused.
    world
        .test_route("rotate", json!({"keep_previous": false}))
        .await;
    let newest = world.token("svc-vet").await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    let refused = world.get("/api/me", Some(&before)).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.body);
    assert!(
        refused.message().contains("does not publish"),
        "{}",
        refused.message()
    );
    assert_eq!(
        world.get("/api/me", Some(&newest)).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_flood_of_made_up_key_ids_costs_the_provider_at_most_one_fetch() {
    let world = world(|identity| identity).await;
    let good = world.token("svc-vet").await;
    assert_eq!(
        world.get("/api/me", Some(&good)).await.status,
        StatusCode::OK
    );
    let fetched = world.counts().await["jwks"].as_u64().unwrap();

    let mut flood = Vec::new();
    for n in 0..200 {
        let header = json!({"kid": format!("made-up-{n}")});
        flood.push(world.signed(world.claims(json!({})), header, true).await);
    }
    let answers =
        futures::future::join_all(flood.iter().map(|token| world.get("/api/me", Some(token))))
            .await;
    assert!(
        answers
            .iter()
            .all(|answer| answer.status == StatusCode::UNAUTHORIZED)
    );
    let after = world.counts().await["jwks"].as_u64().unwrap();
    assert!(
        after - fetched <= 1,
        "{} fetches for 200 made-up key ids",
        after - fetched
    );
    assert_eq!(
        world.get("/api/me", Some(&good)).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn with_the_provider_down_held_keys_keep_working_and_without_them_the_answer_is_503() {
    let mut world = world(|identity| identity.fetch_timeout(Duration::from_secs(2))).await;
    let token = world.token("svc-vet").await;
    assert_eq!(
        world.get("/api/me", Some(&token)).await.status,
        StatusCode::OK
    );

    world.provider.stop();
    assert_eq!(
        world.get("/api/me", Some(&token)).await.status,
        StatusCode::OK
    );

    // An instance that never reached the provider cannot check the token: 503, not 401.
    let fresh = trusting(&world.provider, &world.resource)
        .build(world.registry.roles())
        .unwrap();
    let refused = fresh.caller(&token).await.unwrap_err();
    assert!(
        matches!(refused, IdentityError::ProviderUnavailable { .. }),
        "{refused}"
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    serve(listener, &world.registry, fresh);
    let answer = answer(
        world
            .http
            .get(format!("http://{address}/api/me"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.body
    );
    assert!(
        answer.message().contains("could not be asked"),
        "{}",
        answer.message()
    );
    assert!(answer.challenge.is_empty());
}

#[tokio::test]
async fn opaque_tokens_are_introspected_once_and_remembered() {
    let world = world(|identity| identity).await;
    let identity = introspecting(&world);
    let opaque = world.token_for("svc-vet", "tools:call", None).await;
    assert!(!opaque.contains('.'), "an opaque token: {opaque}");
    let before = world.counts().await["introspection"].as_u64().unwrap();
    for _ in 0..5 {
        let caller = identity.caller(&opaque).await.unwrap();
        assert_eq!((caller.id(), caller.role()), ("svc-vet", "staff"));
    }
    let made_up = "not-a-token-the-provider-ever-issued";
    for _ in 0..3 {
        assert_eq!(
            identity.caller(made_up).await.unwrap_err(),
            IdentityError::Inactive
        );
    }
    let after = world.counts().await["introspection"].as_u64().unwrap();
    assert_eq!(
        after - before,
        2,
        "one lookup for each token, then remembered"
    );
}

#[tokio::test]
async fn users_of_two_providers_never_share_an_id() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let app = format!("http://{}", listener.local_addr().unwrap());
    let resource = format!("{app}/mcp");
    let first = start_provider(settings(&resource)).await;
    let second = start_provider(settings(&resource)).await;
    let registry = registry();
    let identity = Identity::builder()
        .issuer(Issuer::new(&first.issuer).named("first"))
        .issuer(Issuer::new(&second.issuer).named("second"))
        .audience(&resource)
        .role_from_claim("groups", "vets", "staff")
        .build(registry.roles())
        .unwrap();
    serve(listener, &registry, identity);
    let world = |provider| World {
        provider,
        app: app.clone(),
        resource: resource.clone(),
        http: reqwest::Client::new(),
        registry: registry.clone(),
    };
    let (first, second) = (world(first), world(second));
    let one = first.token("svc-vet").await;
    let two = second.token("svc-vet").await;
    assert_eq!(
        first.get("/api/me", Some(&one)).await.body["id"],
        "first#svc-vet"
    );
    assert_eq!(
        second.get("/api/me", Some(&two)).await.body["id"],
        "second#svc-vet"
    );
    first.call(&one, "clinic_hours", json!({})).await;
    let history = registry.history("first#svc-vet", 5).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        history[0].issuer.as_deref(),
        Some(first.provider.issuer.as_str())
    );
    assert!(
        registry
            .history("second#svc-vet", 5)
            .await
            .unwrap()
            .is_empty()
    );
}
