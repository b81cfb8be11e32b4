//! People sign in to the console through a real OpenID provider (`oidc-provider` on
//! 127.0.0.1), in headless Chromium: the authorization code flow with PKCE, a session kept
//! server-side, nothing of a token in the page. Two people in two browsers see the tools
//! their groups map to; signing out ends the session on the server.

use std::net::SocketAddr;

use serde_json::json;
use toolgate::console::{Console, ProviderSignIn};
use toolgate::http::{HttpOptions, router};
use toolgate::identity::{Identity, Issuer};
use toolgate::prelude::*;
use toolgate::store::Stores;
use toolgate_test_support::{Chromium, OidcProvider, Page};

/// Open to everyone.
#[tool(permission = "public", group = "sign_in_tests", read_only)]
fn opening_hours() -> String {
    "08:00-18:00".into()
}

/// A patient's chart, for staff.
#[tool(permission = "staff", group = "sign_in_tests", read_only)]
fn patient_chart(
    /// The patient.
    patient: String,
) -> String {
    format!("chart of {patient}")
}

struct Site {
    base: String,
    /// A second instance of the application, sharing the first one's state.
    other: String,
    provider: OidcProvider,
    _state: tempfile::TempDir,
}

/// Two instances of one application (the router at `/api`, the console at `/console`),
/// sharing their state in one SQLite file, both behind an identity trusting a fresh
/// provider whose `ana` is a vet and `bo` an owner.
async fn site() -> Site {
    let bind = || tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)));
    let (listener, other) = (bind().await.unwrap(), bind().await.unwrap());
    let base = format!("http://{}", listener.local_addr().unwrap());
    let resource = format!("{base}/api");
    let callback = format!("{base}/console/callback");
    let settings = json!({
        "audiences": [resource],
        "redirect_uris": [callback],
        "users": {"ana": ["vets"], "bo": ["owners"]},
    })
    .to_string();
    let folder = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let provider = tokio::task::spawn_blocking(move || OidcProvider::start(&folder, &settings))
        .await
        .unwrap();
    let state = tempfile::tempdir().unwrap();
    let address = format!("sqlite:{}", state.path().join("state.db").display());
    let other_base = format!("http://{}", other.local_addr().unwrap());
    for (listener, base) in [(listener, &base), (other, &other_base)] {
        let stores = Stores::open(&address).await.unwrap();
        let app = instance(
            &provider,
            &resource,
            &format!("{base}/console/callback"),
            &stores,
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
    }
    Site {
        base,
        other: other_base,
        provider,
        _state: state,
    }
}

/// One instance of the application.
fn instance(
    provider: &OidcProvider,
    resource: &str,
    callback: &str,
    stores: &Stores,
) -> axum::Router {
    let registry = Registry::builder()
        .roles(["public", "customer", "staff"])
        .filter_linked(|tool| tool.group.as_deref() == Some("sign_in_tests"))
        .build()
        .unwrap();
    let identity = Identity::builder()
        .issuer(Issuer::new(&provider.issuer))
        .audience(resource)
        .role_from_claim("groups", "owners", "customer")
        .role_from_claim("groups", "vets", "staff")
        .sessions(stores.sessions.clone())
        .build(registry.roles())
        .unwrap();
    let sign_in = ProviderSignIn::new(identity.clone(), "console", callback)
        .client_secret("console-secret")
        .scopes(["openid", "tools:call"]);
    let console = Console::new().api("/api").sign_in_through(sign_in);
    axum::Router::new()
        .nest("/api", router(registry, identity, HttpOptions::default()))
        .merge(console.router())
}

/// Signs `login` in through the provider's pages, as a person would, and waits for the
/// console to greet them.
async fn sign_in(page: &mut Page, site: &Site, login: &str) {
    page.open(&format!("{}/console", site.base)).await;
    page.wait_for(
        "!document.getElementById('sign-in-provider').hidden",
        "the provider's sign-in link",
    )
    .await;
    page.eval("document.getElementById('sign-in-link').click(); true")
        .await;
    page.wait_for(
        "document.querySelector('input[name=login]') !== null",
        "the provider's login form",
    )
    .await;
    page.eval(&format!(
        "document.querySelector('input[name=login]').value = {login}; \
         document.querySelector('input[name=password]').value = 'any'; \
         document.querySelector('form').submit(); true",
        login = json!(login)
    ))
    .await;
    // The provider may ask to confirm once; then it sends the browser back.
    let back = format!("location.href.startsWith({})", json!(site.base));
    let consent = "document.querySelector('input[name=prompt][value=consent]') !== null";
    let state = page
        .wait_for(
            &format!("({back}) ? 'back' : ({consent}) ? 'consent' : ''"),
            "the provider's answer",
        )
        .await;
    if state == "consent" {
        page.eval("document.querySelector('form').submit(); true")
            .await;
    }

    page.wait_for(
        "document.getElementById('signed-in').textContent.includes('(')",
        "the console's greeting",
    )
    .await;
}

async fn tools_offered(page: &mut Page) -> Vec<String> {
    page.wait_for(
        "document.getElementById('call-tool').options.length > 0",
        "the tool list",
    )
    .await;
    let names = page
        .eval("[...document.getElementById('call-tool').options].map(o => o.value).sort()")
        .await;
    serde_json::from_value(names).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_sign_in_through_the_provider_and_see_their_roles_tools() {
    let site = site().await;
    let (vet_browser, owner_browser) = (Chromium::start().await, Chromium::start().await);
    let mut vet = vet_browser.page().await;
    let mut owner = owner_browser.page().await;

    sign_in(&mut vet, &site, "ana").await;
    let greeting = vet
        .eval("document.getElementById('signed-in').textContent")
        .await;
    assert_eq!(greeting, "ana (staff)");
    assert_eq!(
        tools_offered(&mut vet).await,
        ["opening_hours", "patient_chart"]
    );

    sign_in(&mut owner, &site, "bo").await;
    let greeting = owner
        .eval("document.getElementById('signed-in').textContent")
        .await;
    assert_eq!(greeting, "bo (customer)");
    assert_eq!(tools_offered(&mut owner).await, ["opening_hours"]);

    // Nothing of a token or session is within the page's reach.
    let reachable = vet
        .eval("document.cookie + JSON.stringify(sessionStorage) + JSON.stringify(localStorage)")
        .await;
    let reachable = reachable.as_str().unwrap();
    assert!(
        !reachable.contains("toolgate_session") && !reachable.contains("eyJ"),
        "{reachable}"
    );

    // The page's own requests carry the session: a call runs as ana.
    let chart = vet
        .eval(
            "fetch('/api/tools/call', {method: 'POST', headers: {'Content-Type': 'application/json'}, \
             body: JSON.stringify({name: 'patient_chart', arguments: {patient: 'Rex'}})}) \
             .then(r => r.json())",
        )
        .await;
    assert_eq!(chart["result"], "chart of Rex", "{chart}");

    // The other instance knows the session too (a browser sends 127.0.0.1's cookies to
    // every port of it, as a load balancer's instances share one site).
    let mut elsewhere = vet_browser.page().await;
    elsewhere.open(&format!("{}/console", site.other)).await;
    elsewhere
        .wait_for(
            "document.getElementById('signed-in').textContent === 'ana (staff)'",
            "the other instance's greeting",
        )
        .await;

    // Signing out ends the session on the server: the cookie no longer lets anyone in.
    vet.eval("document.getElementById('sign-out').click(); true")
        .await;
    vet.wait_for(
        "!document.getElementById('sign-in').hidden",
        "the sign-in form after signing out",
    )
    .await;
    let status = vet.eval("fetch('/api/me').then(r => r.status)").await;
    assert_eq!(status, 401);
    // The owner's session is untouched.
    assert_eq!(
        owner.eval("fetch('/api/me').then(r => r.status)").await,
        200
    );
    let status = elsewhere
        .eval(&format!(
            "fetch('{}/api/me').then(r => r.status)",
            site.other
        ))
        .await;
    assert_eq!(status, 401, "signed out on every instance");
    assert!(vet.problems().is_empty(), "{:?}", vet.problems());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_answer_not_started_in_this_browser_is_refused() {
    let site = site().await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    // A callback with a code and state, but no sign-in cookie: someone else's sign-in
    // pushed into this browser (login CSRF).
    let forged = client
        .get(format!("{}/console/callback?code=abc&state=xyz", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 400);
    let page = forged.text().await.unwrap();
    assert!(page.contains("not started in this browser"), "{page}");

    // A started sign-in goes to the provider with PKCE (S256) and this resource.
    let started = client
        .get(format!("{}/console/sign-in", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 303);
    let location = started.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        location.starts_with(&format!("{}/auth?", site.provider.issuer)),
        "{location}"
    );
    for part in [
        "code_challenge_method=S256",
        "code_challenge=",
        "response_type=code",
        "resource=",
    ] {
        assert!(location.contains(part), "{part} in {location}");
    }
    let cookie = started.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );

    // The provider refusing: said plainly, with the way back.
    let refused = client
        .get(format!(
            "{}/console/callback?error=access_denied&state=xyz",
            site.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.unwrap().contains("access_denied"));
}
