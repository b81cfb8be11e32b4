//! Callers identified by a real OpenID provider's tokens (`oidc-provider`, started on
//! 127.0.0.1 by each test): over HTTP, MCP over HTTP and in process, with the provider's
//! own tokens, tokens it signed with claims of the test's choosing, and forgeries.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use toolgate::http::{HttpOptions, router};
use toolgate::identity::{Identity, IdentityBuilder, IdentityError, Issuer};
use toolgate::mcp::{McpHttpOptions, http_service_with};
use toolgate::prelude::*;
use toolgate_test_support::OidcProvider;

/// A resource the provider also issues tokens for: not this one.
const ELSEWHERE: &str = "https://billing.example.com/api";

/// Open to everyone.
#[tool(permission = "public", group = "identity_tests", read_only)]
fn clinic_hours() -> String {
    "08:00-18:00".into()
}

/// A pet owner's own pets.
#[tool(permission = "customer", group = "identity_tests", read_only)]
fn my_pets(#[ctx] caller: Caller) -> String {
    format!("the pets of {}", caller.id())
}

/// A patient's record, for staff.
#[tool(permission = "staff", group = "identity_tests", read_only)]
fn patient_record(
    /// The patient.
    patient: String,
) -> String {
    format!("record of {patient}")
}

/// Closes the clinic, for admins.
#[tool(permission = "admin", group = "identity_tests")]
fn close_clinic() -> String {
    "closed".into()
}

fn registry() -> Registry {
    Registry::builder()
        .roles(["public", "customer", "staff", "admin"])
        .filter_linked(|tool| tool.group.as_deref() == Some("identity_tests"))
        .build()
        .unwrap()
}

/// A provider, and the application trusting it on a port of its own.
struct World {
    provider: OidcProvider,
    app: String,
    resource: String,
    http: reqwest::Client,
    registry: Registry,
}

fn settings(resource: &str) -> String {
    json!({
        "audiences": [resource, ELSEWHERE],
        "services": {"svc-vet": ["vets"], "svc-owner": ["owners"], "svc-admin": ["admins", "vets"], "svc-nobody": []},
        "users": {"ana": ["vets"]},
    })
    .to_string()
}

fn trusting(provider: &OidcProvider, resource: &str) -> IdentityBuilder {
    Identity::builder()
        .issuer(Issuer::new(&provider.issuer))
        .audience(resource)
        .role_from_claim("groups", "owners", "customer")
        .role_from_claim("groups", "vets", "staff")
        .role_from_claim("groups", "admins", "admin")
}

async fn world(configure: impl FnOnce(IdentityBuilder) -> IdentityBuilder) -> World {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let app = format!("http://{}", listener.local_addr().unwrap());
    let resource = format!("{app}/mcp");
    let provider = start_provider(settings(&resource)).await;
    let registry = registry();
    let identity = configure(trusting(&provider, &resource))
        .build(registry.roles())
        .unwrap();
    serve(listener, &registry, identity);
    World {
        provider,
        app,
        resource,
        http: reqwest::Client::new(),
        registry,
    }
}

async fn start_provider(settings: String) -> OidcProvider {
    let folder = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tokio::task::spawn_blocking(move || OidcProvider::start(&folder, &settings))
        .await
        .unwrap()
}

/// The HTTP router at `/api`, MCP at `/mcp` and the resource's metadata, all behind
/// `identity`.
fn serve(listener: tokio::net::TcpListener, registry: &Registry, identity: Identity) {
    let mcp = http_service_with(
        registry.clone(),
        identity.clone(),
        McpHttpOptions::default(),
    );
    let app = axum::Router::new()
        .nest(
            "/api",
            router(registry.clone(), identity.clone(), HttpOptions::default()),
        )
        .nest_service("/mcp", mcp)
        .merge(identity.metadata_router());
    tokio::spawn(async move { axum::serve(listener, app).await });
}

/// What came back: the status, the challenge, and the JSON body.
struct Answer {
    status: StatusCode,
    challenge: String,
    body: Value,
}

impl Answer {
    fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or_default()
    }
}

impl World {
    /// A client-credentials token of `client` for `resource` (none: an opaque token).
    async fn token_for(&self, client: &str, scope: &str, resource: Option<&str>) -> String {
        let mut form = vec![("grant_type", "client_credentials"), ("scope", scope)];
        if let Some(resource) = resource {
            form.push(("resource", resource));
        }
        let answer: Value = self
            .http
            .post(format!("{}/token", self.provider.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&form))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_owned()
    }

    async fn token(&self, client: &str) -> String {
        self.token_for(client, "tools:call", Some(&self.resource))
            .await
    }

    /// A token the provider's key (or the rogue one) signed, of the test's claims.
    async fn signed(&self, claims: Value, header: Value, rogue: bool) -> String {
        let answer: Value = self
            .test_route(
                "sign",
                json!({"claims": claims, "header": header, "rogue": rogue}),
            )
            .await;
        answer["token"].as_str().unwrap().to_owned()
    }

    async fn test_route(&self, route: &str, body: Value) -> Value {
        self.http
            .post(format!("{}/__test/{route}", self.provider.issuer))
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn counts(&self) -> Value {
        self.http
            .get(format!("{}/__test/counts", self.provider.issuer))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Claims as the provider would write them for this resource, with `extra` over them.
    fn claims(&self, extra: Value) -> Value {
        let now = now();
        let mut claims = json!({
            "iss": self.provider.issuer, "aud": self.resource, "sub": "ana",
            "groups": ["vets"], "iat": now, "exp": now + 600, "scope": "tools:call",
        });
        for (name, value) in extra.as_object().unwrap() {
            claims[name] = value.clone();
        }
        claims
    }

    async fn get(&self, path: &str, token: Option<&str>) -> Answer {
        let mut request = self.http.get(format!("{}{path}", self.app));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        answer(request.send().await.unwrap()).await
    }

    async fn call(&self, token: &str, tool: &str, arguments: Value) -> Answer {
        let request = self
            .http
            .post(format!("{}/api/tools/call", self.app))
            .bearer_auth(token)
            .json(&json!({"id": "c1", "name": tool, "arguments": arguments}));
        answer(request.send().await.unwrap()).await
    }

    async fn tool_names(&self, token: &str) -> Vec<String> {
        let listed = self.get("/api/tools", Some(token)).await;
        assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
        names(&listed.body["tools"])
    }

    /// The tools MCP lists to the holder of `token`, through rmcp's client.
    async fn mcp_tool_names(&self, token: &str) -> Vec<String> {
        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.app))
            .auth_header(token);
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        let tools = client.peer().list_all_tools().await.unwrap();
        let _ = client.cancel().await;
        tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }
}

async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.json().await.unwrap_or(Value::Null);
    Answer {
        status,
        challenge,
        body,
    }
}

fn names(tools: &Value) -> Vec<String> {
    let mut names: Vec<String> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

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
async fn tokens_that_must_not_pass_are_refused_with_their_status_and_reason() {
    let world = world(|identity| identity.require_scope("tools:call")).await;
    let check = |answer: Answer, status: StatusCode, error: &str, says: &str| {
        assert_eq!(answer.status, status, "{says}: {}", answer.body);
        assert!(
            answer.challenge.contains(&format!("error=\"{error}\"")),
            "{says}: {}",
            answer.challenge
        );
        assert!(
            answer.message().contains(says),
            "{says}: {}",
            answer.message()
        );
    };
    let at_me = |token: String| {
        let world = &world;
        async move { world.get("/api/me", Some(&token)).await }
    };

    let expired = world
        .signed(
            world.claims(json!({"exp": now() - 3600, "iat": now() - 7200})),
            json!({}),
            false,
        )
        .await;
    check(
        at_me(expired).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "expired",
    );
    let early = world
        .signed(world.claims(json!({"nbf": now() + 3600})), json!({}), false)
        .await;
    check(
        at_me(early).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "not valid yet",
    );
    let other_issuer = world
        .signed(
            world.claims(json!({"iss": "https://login.evil.example"})),
            json!({}),
            false,
        )
        .await;
    check(
        at_me(other_issuer).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "issuer",
    );
    // A real token of the provider, minted for another service.
    let elsewhere = world
        .token_for("svc-vet", "tools:call", Some(ELSEWHERE))
        .await;
    check(
        at_me(elsewhere).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "another resource",
    );

    // `alg: none`: the provider's real claims, no signature.
    let real = world.token("svc-vet").await;
    let claims_part = real.split('.').nth(1).unwrap();
    let unsigned = format!(
        "{}.{claims_part}.",
        base64url(r#"{"alg":"none","typ":"at+jwt"}"#)
    );
    check(
        at_me(unsigned).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "`none`",
    );

    // HS256 with the provider's public key as the secret.
    let public: Value = world
        .http
        .get(format!("{}/__test/public-key", world.provider.issuer))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = public["jwk"]["kid"].as_str().map(str::to_owned);
    let secret = jsonwebtoken::EncodingKey::from_secret(public["pem"].as_str().unwrap().as_bytes());
    let confused = jsonwebtoken::encode(&header, &world.claims(json!({})), &secret).unwrap();
    check(
        at_me(confused).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "HS256",
    );

    // Signed by a key the issuer does not publish, its header pointing at the attacker's keys.
    let jku = format!("{}/__test/rogue-jwks", world.provider.issuer);
    let rogue = world
        .signed(
            world.claims(json!({})),
            json!({"jku": jku, "x5u": jku}),
            true,
        )
        .await;
    check(
        at_me(rogue).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "does not publish",
    );
    assert_eq!(world.counts().await["rogue_jwks"], 0, "a jku was followed");

    // A token too long to read: refused unread; one too long for HTTP, refused by the server.
    let long = format!("{}.{}.{}", "a".repeat(10_000), "b".repeat(10_000), "c");
    check(
        at_me(long).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "over the limit",
    );
    let huge = world.get("/api/me", Some(&"x".repeat(1 << 20))).await;
    assert!(huge.status.is_client_error(), "{}", huge.status);

    // Valid, but no claim maps to a role.
    let nobody = world.token("svc-nobody").await;
    check(
        at_me(nobody).await,
        StatusCode::FORBIDDEN,
        "insufficient_scope",
        "no role",
    );
    // Valid, but without the scope this resource requires.
    let reader = world
        .token_for("svc-vet", "tools:read", Some(&world.resource))
        .await;
    let refused = at_me(reader).await;
    assert_eq!(
        refused.challenge.split(", ").nth(1),
        Some("scope=\"tools:call\"")
    );
    check(
        refused,
        StatusCode::FORBIDDEN,
        "insufficient_scope",
        "tools:call",
    );

    // After all that, the server still serves.
    let fine = world.token("svc-vet").await;
    assert_eq!(at_me(fine).await.status, StatusCode::OK);
}

fn form_body(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| format!("{name}={}", value.replace(':', "%3A").replace('/', "%2F")))
        .collect::<Vec<_>>()
        .join("&")
}

fn base64url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
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

fn kid(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
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

/// The world's provider, trusted also for its opaque tokens.
fn introspecting(world: &World) -> Identity {
    Identity::builder()
        .issuer(
            Issuer::new(&world.provider.issuer)
                .introspection("resource-server", "resource-server-secret"),
        )
        .audience(&world.resource)
        .role_from_claim("groups", "vets", "staff")
        .build(world.registry.roles())
        .unwrap()
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
