//! `[auth]`: `toolgate serve` takes a real OpenID provider's tokens (`oidc-provider` on
//! 127.0.0.1) beside the configured callers' own, and publishes the resource's metadata;
//! mistakes in `[auth]` name their line.

use serde_json::{Value, json};
use toolgate_test_support::OidcProvider;

use crate::support::{Project, Serving};

fn config(issuer: &str, audience: &str) -> String {
    format!(
        r#"
roles = ["public", "staff", "admin"]
user_tools = false

[callers.ada]
role = "admin"
token_env = "ADA_TOKEN"

[sandbox]
root = "work"

[auth]
issuer = "{issuer}"
audience = "{audience}"
default_role = "public"

[[auth.roles]]
claim = "groups"
value = "vets"
role = "staff"
"#
    )
}

fn tool(name: &str, permission: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The tool {name}.\npermission: {permission}\ncommand: {{program: echo, args: [\"{name}\"], output: text}}\n---\n"
    )
}

async fn token(issuer: &str, client: &str, resource: &str) -> String {
    let body = format!(
        "grant_type=client_credentials&scope=tools%3Acall&resource={}",
        resource.replace(':', "%3A").replace('/', "%2F")
    );
    let answer: Value = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth(client, Some(format!("{client}-secret")))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["access_token"].as_str().unwrap().to_owned()
}

async fn get(url: &str, token: Option<&str>) -> (u16, String, Value) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (
        status,
        challenge,
        response.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_takes_the_providers_tokens_beside_the_configured_callers() {
    // The port is chosen first: the audience is the server's own URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let audience = format!("{base}/tools");
    let settings = json!({
        "audiences": [audience],
        "services": {"svc-vet": ["vets"], "svc-visitor": ["visitors"]},
    })
    .to_string();
    let folder = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let provider = tokio::task::spawn_blocking(move || OidcProvider::start(&folder, &settings))
        .await
        .unwrap();
    let project = Project::new(&config(&provider.issuer, &audience));
    project.write(".toolgate/tools/hello.md", &tool("hello", "public"));
    project.write(".toolgate/tools/chart.md", &tool("chart", "staff"));
    project.write(".toolgate/tools/purge.md", &tool("purge", "admin"));
    let address = format!("127.0.0.1:{port}");
    let server = tokio::task::block_in_place(|| {
        Serving::start(&project, &["http", &address], &[("ADA_TOKEN", "ada-token")])
    });
    let url = |path: &str| format!("{}{path}", server.url);

    let names = |tools: &Value| -> Vec<String> {
        let mut names: Vec<String> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let vet = token(&provider.issuer, "svc-vet", &audience).await;
    let (status, _, me) = get(&url("/me"), Some(&vet)).await;
    assert_eq!(
        (status, &me["id"], &me["role"]),
        (200, &json!("svc-vet"), &json!("staff"))
    );
    assert_eq!(
        names(&get(&url("/tools"), Some(&vet)).await.2),
        ["chart", "hello"]
    );
    // A valid token no rule maps: the default role.
    let visitor = token(&provider.issuer, "svc-visitor", &audience).await;
    assert_eq!(get(&url("/me"), Some(&visitor)).await.2["role"], "public");
    // The configured caller's own token still works.
    assert_eq!(
        names(&get(&url("/tools"), Some("ada-token")).await.2),
        ["chart", "hello", "purge"]
    );

    let (status, challenge, body) = get(&url("/tools"), Some("made-up")).await;
    assert_eq!(status, 401, "{body}");
    let metadata_url = format!("{base}/.well-known/oauth-protected-resource/tools");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    let (status, _, metadata) = get(&metadata_url, None).await;
    assert_eq!(status, 200);
    assert_eq!(metadata["resource"], audience);
    assert_eq!(metadata["authorization_servers"], json!([provider.issuer]));
}

#[track_caller]
fn refused(auth: &str, line: usize, expected: &str) {
    let project = Project::new(&format!("roles = [\"public\", \"staff\"]\n\n{auth}"));
    let ran = project.run(&["tools", "list"], "").expect(2);
    let error = ran.stderr();
    assert!(
        error.contains(&format!("toolgate.toml:{line}: ")),
        "line {line}: {error}"
    );
    assert!(error.contains(expected), "{expected:?} in {error}");
}

#[test]
fn mistakes_in_auth_name_their_line_and_the_fix() {
    let good =
        "issuer = \"https://id.example.com\"\naudience = \"https://tools.example.com/mcp\"\n";
    refused(
        "[auth]\naudience = \"https://tools.example.com/mcp\"\n",
        3,
        "[auth] needs the identity provider",
    );
    refused(
        &format!("[auth]\n{good}algorithms = [\"RS256\", \"HS256\"]\n"),
        6,
        "`HS256` is not an accepted algorithm",
    );
    refused(
        &format!(
            "[auth]\n{good}\n[[auth.roles]]\nclaim = \"groups\"\nvalue = \"vets\"\nrole = \"vet\"\n"
        ),
        10,
        "\"vet\" is not a role; the roles are \"public\", \"staff\"",
    );
    refused(
        &format!("[auth]\n{good}issuers_url = \"x\"\n"),
        6,
        "unknown field `issuers_url`",
    );
    refused(
        "[auth]\nissuer = \"https://id.example.com\"\naudience = \"tools\"\n",
        5,
        "`audience` is this server's URL",
    );
    refused(
        &format!("[auth]\n{good}\n[auth.scopes]\n\"tools:read\" = \"boss\"\n"),
        8,
        "\"boss\" is not a role",
    );
}
