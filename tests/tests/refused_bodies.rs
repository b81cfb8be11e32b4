//! A request answered before its body is read still gets its answer: a client sending a
//! large body with a wrong token, the wrong media type, too much, or to a route that is not
//! there sees the error that says what to fix, not a connection reset under it (as these
//! requests got before: the server answered, then closed with the body unread).

use axum::Router;
use axum::http::request::Parts;
use toolgate::agent::Agent;
use toolgate::agent::models::OpenAiChat;
use toolgate::devices::{Device, DeviceHub};
use toolgate::http::{AuthError, HttpOptions, agent_router, router};
use toolgate::mcp::{McpHttpOptions, http_service_with};
use toolgate::{Caller, Registry};

fn authenticate(parts: &Parts) -> Result<Caller, AuthError> {
    match parts.headers.get("authorization").map(|v| v.as_bytes()) {
        Some(b"Bearer good") => Ok(Caller::new("dr-lee", "staff")),
        _ => Err(AuthError::unauthenticated("unknown token")),
    }
}

fn registry() -> Registry {
    builder().build().unwrap()
}

fn builder() -> toolgate::RegistryBuilder {
    Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
}

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}

/// A JSON body of about `size` bytes.
fn body_of(size: usize) -> String {
    format!("{{\"calls\": [], \"pad\": \"{}\"}}", "x".repeat(size))
}

/// Sends each request as a client on a slow link would: its head and the first 64 KiB of
/// its body, a pause (a server that does not wait for the rest has answered by then), then
/// the rest. What did not come back with its status, as the client saw it.
async fn unanswered(base: &str, cases: &[(&str, &str, &str, &str, usize, u16)]) -> Vec<String> {
    unanswered_with(base, "", cases).await
}

/// [`unanswered`], each request also sending `headers` (whole lines, each ending `\r\n`).
async fn unanswered_with(
    base: &str,
    headers: &str,
    cases: &[(&str, &str, &str, &str, usize, u16)],
) -> Vec<String> {
    let mut failures = Vec::new();
    for &(method, path, token, media_type, size, expected) in cases {
        let body = body_of(size);
        let head = format!(
            "{method} {path} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer {token}\r\n\
             content-type: {media_type}\r\naccept: application/json, text/event-stream\r\n\
             content-length: {}\r\nconnection: close\r\n{headers}\r\n",
            body.len()
        );
        match status_seen(base, head, body.as_bytes()).await {
            Ok(status) if status == expected => {}
            Ok(status) => failures.push(format!("{method} {path}: {status}")),
            Err(error) => failures.push(format!("{method} {path}: {error}")),
        }
    }
    failures
}

async fn status_seen(base: &str, head: String, body: &[u8]) -> std::io::Result<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(base.trim_start_matches("http://")).await?;
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&body[..64 * 1024]).await?;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // As HTTP clients do (hyper's, reqwest's), a body that cannot be sent fails the
    // request: the answer waiting unread is never seen.
    stream.write_all(&body[64 * 1024..]).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.split(' ').nth(1).and_then(|code| code.parse().ok());
    status.ok_or_else(|| std::io::Error::other(format!("no status in {answer:?}")))
}

const JSON: &str = "application/json";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_router_answers_what_it_refuses_before_reading() {
    let base = serve(router(registry(), authenticate, HttpOptions::default())).await;
    let big = 900 * 1024;
    let cases = [
        ("POST", "/tools/call", "stolen", JSON, big, 401),
        ("POST", "/approvals/approve", "stolen", JSON, big, 401),
        ("POST", "/tools/call", "good", "text/plain", big, 415),
        // Over the 1 MiB limit: up to 1 MiB past it is read before the answer.
        ("POST", "/tools/call", "good", JSON, 1900 * 1024, 413),
        ("POST", "/no/such/route", "good", JSON, big, 404),
        ("POST", "/tools", "good", JSON, big, 405),
    ];
    let failures = unanswered(&base, &cases).await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_routes_answer_what_they_refuse_before_reading() {
    // The model is never asked: every request here is refused before a run starts.
    let model = OpenAiChat::new("http://127.0.0.1:9/v1", "unused");
    let agent = Agent::builder(registry(), model).build();
    let base = serve(agent_router(agent, authenticate, HttpOptions::default())).await;
    let big = 900 * 1024;
    let cases = [
        ("POST", "/chat", "stolen", JSON, big, 401),
        ("POST", "/chat/run-1/resume", "stolen", JSON, big, 401),
        ("POST", "/chat", "good", "text/plain", big, 415),
    ];
    let failures = unanswered(&base, &cases).await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_endpoint_answers_what_it_refuses_before_reading() {
    let service = http_service_with(registry(), authenticate, McpHttpOptions::default());
    let base = serve(Router::new().nest_service("/mcp", service)).await;
    let big = 900 * 1024;
    // The token is ours to refuse; the media type and the method, the MCP layer's (rmcp).
    let cases = [
        ("POST", "/mcp", "stolen", JSON, big, 401),
        ("POST", "/mcp", "good", "text/plain", big, 415),
        ("PUT", "/mcp", "good", JSON, big, 405),
    ];
    let failures = unanswered(&base, &cases).await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_endpoint_answers_a_host_or_origin_it_does_not_allow_before_reading() {
    // A server behind a proxy whose `Host` it was not told of, and a browser page elsewhere:
    // the MCP layer refuses both.
    let behind_a_proxy = McpHttpOptions {
        allowed_hosts: vec!["tools.example.com".into()],
        ..McpHttpOptions::default()
    };
    let for_one_page = McpHttpOptions {
        allowed_origins: vec!["https://app.example.com".into()],
        ..McpHttpOptions::default()
    };
    let origin = "origin: https://elsewhere.example.com\r\n";
    for (options, headers) in [(behind_a_proxy, ""), (for_one_page, origin)] {
        let service = http_service_with(registry(), authenticate, options);
        let base = serve(Router::new().nest_service("/mcp", service)).await;
        let cases = [("POST", "/mcp", "good", JSON, 900 * 1024, 403)];
        let failures = unanswered_with(&base, headers, &cases).await;
        assert!(failures.is_empty(), "{headers:?}: {failures:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_revoke_answers_once_the_body_it_does_not_take_is_in() {
    let hub = DeviceHub::new([Device::new("laptop")
        .token("laptop-token-0123456789")
        .permission("staff")]);
    let registry = hub.attach(builder()).build().unwrap();
    let base = serve(hub.router(registry, authenticate).unwrap()).await;
    let big = 900 * 1024;
    // Refused, and done (dr-lee is of the highest role): both answered after the body.
    let cases = [
        ("POST", "/devices/laptop/revoke", "stolen", JSON, big, 401),
        ("POST", "/devices/laptop/revoke", "good", JSON, big, 200),
    ];
    let failures = unanswered(&base, &cases).await;
    assert!(failures.is_empty(), "{failures:#?}");
}
