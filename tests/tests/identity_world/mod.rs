//! What the identity tests share: a real OpenID provider (`oidc-provider`, started on
//! 127.0.0.1 by each test) and the application trusting it, over HTTP and MCP.
#![allow(dead_code)]

use std::net::SocketAddr;

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use toolgate::http::{HttpOptions, router};
use toolgate::identity::{Identity, IdentityBuilder, Issuer};
use toolgate::mcp::{McpHttpOptions, http_service_with};
use toolgate::prelude::*;
use toolgate_test_support::OidcProvider;

/// A resource the provider also issues tokens for: not this one.
pub const ELSEWHERE: &str = "https://billing.example.com/api";

/// Open to everyone.
#[tool(permission = "public", group = "identity_tests", read_only)]
pub fn clinic_hours() -> String {
    "08:00-18:00".into()
}

/// A pet owner's own pets.
#[tool(permission = "customer", group = "identity_tests", read_only)]
pub fn my_pets(#[ctx] caller: Caller) -> String {
    format!("the pets of {}", caller.id())
}

/// A patient's record, for staff.
#[tool(permission = "staff", group = "identity_tests", read_only)]
pub fn patient_record(
    /// The patient.
    patient: String,
) -> String {
    format!("record of {patient}")
}

/// Closes the clinic, for admins.
#[tool(permission = "admin", group = "identity_tests")]
pub fn close_clinic() -> String {
    "closed".into()
}

pub fn registry() -> Registry {
    Registry::builder()
        .roles(["public", "customer", "staff", "admin"])
        .filter_linked(|tool| tool.group.as_deref() == Some("identity_tests"))
        .build()
        .unwrap()
}

/// A provider, and the application trusting it on a port of its own.
pub struct World {
    pub provider: OidcProvider,
    pub app: String,
    pub resource: String,
    pub http: reqwest::Client,
    pub registry: Registry,
}

pub fn settings(resource: &str) -> String {
    json!({
        "audiences": [resource, ELSEWHERE],
        "services": {"svc-vet": ["vets"], "svc-owner": ["owners"], "svc-admin": ["admins", "vets"], "svc-nobody": []},
        "users": {"ana": ["vets"]},
    })
    .to_string()
}

pub fn trusting(provider: &OidcProvider, resource: &str) -> IdentityBuilder {
    Identity::builder()
        .issuer(Issuer::new(&provider.issuer))
        .audience(resource)
        .role_from_claim("groups", "owners", "customer")
        .role_from_claim("groups", "vets", "staff")
        .role_from_claim("groups", "admins", "admin")
}

pub async fn world(configure: impl FnOnce(IdentityBuilder) -> IdentityBuilder) -> World {
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

pub async fn start_provider(settings: String) -> OidcProvider {
    let folder = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tokio::task::spawn_blocking(move || OidcProvider::start(&folder, &settings))
        .await
        .unwrap()
}

/// The HTTP router at `/api`, MCP at `/mcp` and the resource's metadata, all behind
/// `identity`.
pub fn serve(listener: tokio::net::TcpListener, registry: &Registry, identity: Identity) {
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
pub struct Answer {
    pub status: StatusCode,
    pub challenge: String,
    pub body: Value,
}

impl Answer {
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or_default()
    }
}

impl World {
    /// A client-credentials token of `client` for `resource` (none: an opaque token).
    pub async fn token_for(&self, client: &str, scope: &str, resource: Option<&str>) -> String {
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

    pub async fn token(&self, client: &str) -> String {
        self.token_for(client, "tools:call", Some(&self.resource))
            .await
    }

    /// A token the provider's key (or the rogue one) signed, of the test's claims.
    pub async fn signed(&self, claims: Value, header: Value, rogue: bool) -> String {
        let answer: Value = self
            .test_route(
                "sign",
                json!({"claims": claims, "header": header, "rogue": rogue}),
            )
            .await;
        answer["token"].as_str().unwrap().to_owned()
    }

    pub async fn test_route(&self, route: &str, body: Value) -> Value {
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

    pub async fn counts(&self) -> Value {
        self.get_json(&format!("{}/__test/counts", self.provider.issuer))
            .await
    }

    pub async fn get_json(&self, url: &str) -> Value {
        let response = self.http.get(url).send().await.unwrap();
        response.json().await.unwrap()
    }

    /// Claims as the provider would write them for this resource, with `extra` over them.
    pub fn claims(&self, extra: Value) -> Value {
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

    pub async fn get(&self, path: &str, token: Option<&str>) -> Answer {
        let mut request = self.http.get(format!("{}{path}", self.app));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        answer(request.send().await.unwrap()).await
    }

    pub async fn call(&self, token: &str, tool: &str, arguments: Value) -> Answer {
        let request = self
            .http
            .post(format!("{}/api/tools/call", self.app))
            .bearer_auth(token)
            .json(&json!({"id": "c1", "name": tool, "arguments": arguments}));
        answer(request.send().await.unwrap()).await
    }

    pub async fn tool_names(&self, token: &str) -> Vec<String> {
        let listed = self.get("/api/tools", Some(token)).await;
        assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
        names(&listed.body["tools"])
    }

    /// The tools MCP lists to the holder of `token`, through rmcp's client.
    pub async fn mcp_tool_names(&self, token: &str) -> Vec<String> {
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

pub async fn answer(response: reqwest::Response) -> Answer {
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

pub fn names(tools: &Value) -> Vec<String> {
    let mut names: Vec<String> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl World {
    /// `GET /api/me` with `token` must be refused with `status`, the challenge's `error`,
    /// and a message saying `says`.
    pub async fn refuses(&self, token: &str, status: StatusCode, error: &str, says: &str) {
        let answer = self.get("/api/me", Some(token)).await;
        assert_eq!(answer.status, status, "{says}: {}", answer.body);
        let expected = format!("error=\"{error}\"");
        assert!(
            answer.challenge.contains(&expected),
            "{says}: {}",
            answer.challenge
        );
        assert!(
            answer.message().contains(says),
            "{says}: {}",
            answer.message()
        );
    }

    pub async fn still_serves(&self) {
        let fine = self.token("svc-vet").await;
        assert_eq!(
            self.get("/api/me", Some(&fine)).await.status,
            StatusCode::OK
        );
    }
}

pub fn form_body(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| format!("{name}={}", value.replace(':', "%3A").replace('/', "%2F")))
        .collect::<Vec<_>>()
        .join("&")
}

pub fn base64url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

pub fn kid(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

/// The world's provider, trusted also for its opaque tokens.
pub fn introspecting(world: &World) -> Identity {
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
