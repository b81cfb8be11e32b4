//! Signing people in to the console through the identity provider (features `console` and
//! `oidc`): the authorization code flow with PKCE (RFC 7636, by the `oauth2` crate), a
//! `state` bound to the browser by a cookie, and a server-side session (see
//! [`Identity`]'s sessions) named by an HttpOnly, SameSite cookie. No token reaches the
//! page or its storage.
//!
//! | route | does |
//! |---|---|
//! | `GET {console}/sign-in` | sends the browser to the provider's sign-in page |
//! | `GET` the redirect URI's path | takes the provider's answer: the code is exchanged for an access token, checked as every token is, and a session opened |
//! | `POST {console}/sign-out` | ends the session (`Content-Type: application/json`) |

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, TokenResponse, TokenUrl,
};
use serde::Deserialize;
use serde_json::json;
use subtle::ConstantTimeEq;

use crate::adapters::http::{cookie_value, declares_json};
use crate::identity::{
    Fetcher, Identity, IdentityError, Metadata, SESSION_COOKIE, new_secret, session_end, store_key,
};

/// The cookie binding a sign-in under way to the browser that started it.
const SIGN_IN_COOKIE: &str = "toolgate_sign_in";
/// How long a person may take at the provider's page.
const SIGN_IN_TIME: Duration = Duration::from_secs(600);

/// How the console signs people in through the identity provider: its client at the
/// provider, and where the provider sends people back. Give it to
/// [`Console::sign_in_through`](super::Console::sign_in_through).
///
/// ```no_run
/// # fn example(identity: toolgate::identity::Identity) {
/// use toolgate::console::{Console, ProviderSignIn};
///
/// let sign_in = ProviderSignIn::new(identity, "console", "https://clinic.example.com/console/callback")
///     .client_secret(std::env::var("CONSOLE_CLIENT_SECRET").unwrap());
/// let console = Console::new().sign_in_through(sign_in);
/// # let _ = console;
/// # }
/// ```
#[derive(Clone)]
pub struct ProviderSignIn {
    identity: Identity,
    client_id: String,
    client_secret: Option<String>,
    redirect_uri: String,
    scopes: Vec<String>,
    longest_session: Duration,
}

impl std::fmt::Debug for ProviderSignIn {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ProviderSignIn")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("redirect_uri", &self.redirect_uri)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ProviderSignIn {
    /// Signing in with the first issuer of `identity` (which must have a
    /// [session store](crate::identity::IdentityBuilder::sessions)), as the client
    /// `client_id`, the provider sending people back to `redirect_uri` (an absolute URL the
    /// console serves; registered with the provider).
    pub fn new(
        identity: Identity,
        client_id: impl Into<String>,
        redirect_uri: impl Into<String>,
    ) -> Self {
        ProviderSignIn {
            identity,
            client_id: client_id.into(),
            client_secret: None,
            redirect_uri: redirect_uri.into(),
            scopes: vec!["openid".to_owned()],
            longest_session: Duration::from_secs(8 * 3600),
        }
    }

    /// The client's secret, for a confidential client (without one, the client is public
    /// and PKCE alone protects the code).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The scopes asked for (default `openid`).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A session ends when its access token expires, and at the latest after this long
    /// (default 8 hours).
    pub fn longest_session(mut self, longest: Duration) -> Self {
        self.longest_session = longest;
        self
    }

    /// The path of the redirect URI, which the console's router answers.
    pub(super) fn callback_path(&self) -> String {
        match crate::identity::split_origin(&self.redirect_uri) {
            Some((_, path)) if path.starts_with('/') => {
                path.split('?').next().unwrap_or(path).to_owned()
            }
            _ => panic!(
                "the sign-in's redirect URI {:?} must be an absolute http(s) URL with a path",
                self.redirect_uri
            ),
        }
    }

    /// Cookies are `Secure` when people come back over HTTPS.
    fn secure(&self) -> bool {
        self.redirect_uri.starts_with("https://")
    }

    fn client(
        &self,
        metadata: &Metadata,
    ) -> Result<
        BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>,
        String,
    > {
        let endpoint = |found: &Option<String>, name: &str| {
            found
                .clone()
                .ok_or_else(|| format!("the provider's metadata names no `{name}`"))
        };
        let auth = AuthUrl::new(endpoint(
            &metadata.authorization_endpoint,
            "authorization_endpoint",
        )?)
        .map_err(|error| error.to_string())?;
        let token = TokenUrl::new(endpoint(&metadata.token_endpoint, "token_endpoint")?)
            .map_err(|error| error.to_string())?;
        let redirect =
            RedirectUrl::new(self.redirect_uri.clone()).map_err(|error| error.to_string())?;
        let mut client = BasicClient::new(ClientId::new(self.client_id.clone()))
            .set_auth_uri(auth)
            .set_token_uri(token)
            .set_redirect_uri(redirect);
        if let Some(secret) = &self.client_secret {
            client = client.set_client_secret(ClientSecret::new(secret.clone()));
        }
        Ok(client)
    }
}

/// `GET {console}/sign-in`: a new sign-in, remembered under its `state`; the browser goes
/// to the provider.
pub(super) async fn start(State(served): State<Arc<super::Served>>) -> Response {
    let sign_in = match signing_in(&served) {
        Ok(sign_in) => sign_in,
        Err(refused) => return *refused,
    };
    match begin(sign_in).await {
        Ok((url, state)) => {
            let cookie = cookie(
                SIGN_IN_COOKIE,
                &state,
                &served.at,
                SIGN_IN_TIME.as_secs(),
                sign_in.secure(),
            );
            let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, url)]).into_response();
            set_cookie(response.headers_mut(), &cookie);
            response
        }
        Err(error) => problem(StatusCode::SERVICE_UNAVAILABLE, &error, &served.at),
    }
}

/// The provider's address for a new sign-in, and its `state`.
async fn begin(sign_in: &ProviderSignIn) -> Result<(String, String), String> {
    let store = sign_in
        .identity
        .sessions()
        .ok_or_else(|| IdentityError::NoSessions.to_string())?;
    let (metadata, _) = sign_in
        .identity
        .sign_in_provider()
        .await
        .map_err(|error| error.to_string())?;
    let client = sign_in.client(&metadata)?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let state = new_secret();
    let (url, _) = client
        .authorize_url(|| CsrfToken::new(state.clone()))
        .add_scopes(sign_in.scopes.iter().cloned().map(Scope::new))
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", sign_in.identity.resource())
        .url();
    let until = crate::util::time::now_millis() + SIGN_IN_TIME.as_millis() as u64;
    store
        .put(
            store_key("sign-in", &state),
            verifier.secret().clone(),
            until,
        )
        .await
        .map_err(|error| format!("the sign-in could not be kept: {error}"))?;
    Ok((url.to_string(), state))
}

/// What the provider sends back.
#[derive(Deserialize)]
pub(super) struct Answer {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// The redirect URI: the code becomes a checked access token, the token a session.
pub(super) async fn callback(
    State(served): State<Arc<super::Served>>,
    headers: HeaderMap,
    Query(answer): Query<Answer>,
) -> Response {
    let sign_in = match signing_in(&served) {
        Ok(sign_in) => sign_in,
        Err(refused) => return *refused,
    };
    match finish(sign_in, &headers, answer).await {
        Ok((secret, expires_ms)) => {
            let max_age = expires_ms.saturating_sub(crate::util::time::now_millis()) / 1000;
            let mut response = (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, format!("{}/", served.at))],
            )
                .into_response();
            let session = cookie(SESSION_COOKIE, &secret, "/", max_age, sign_in.secure());
            set_cookie(response.headers_mut(), &session);
            set_cookie(
                response.headers_mut(),
                &cookie(SIGN_IN_COOKIE, "", &served.at, 0, sign_in.secure()),
            );
            response
        }
        Err((status, message)) => problem(status, &message, &served.at),
    }
}

async fn finish(
    sign_in: &ProviderSignIn,
    headers: &HeaderMap,
    answer: Answer,
) -> Result<(String, u64), (StatusCode, String)> {
    let refused = |status, message: String| (status, message);
    if let Some(error) = answer.error {
        let error: String = error
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(64)
            .collect();
        return Err(refused(
            StatusCode::FORBIDDEN,
            format!("the identity provider did not sign you in ({error})"),
        ));
    }
    let (Some(code), Some(state)) = (answer.code, answer.state) else {
        return Err(refused(
            StatusCode::BAD_REQUEST,
            "the provider's answer has no code or state".into(),
        ));
    };
    let started_here = cookie_value(headers, SIGN_IN_COOKIE)
        .is_some_and(|kept| bool::from(kept.as_bytes().ct_eq(state.as_bytes())));
    if !started_here {
        return Err(refused(
            StatusCode::BAD_REQUEST,
            "this sign-in was not started in this browser; start again".into(),
        ));
    }
    let identity = &sign_in.identity;
    let unavailable =
        |error: IdentityError| refused(StatusCode::SERVICE_UNAVAILABLE, error.to_string());
    let store = identity
        .sessions()
        .ok_or_else(|| unavailable(IdentityError::NoSessions))?;
    let verifier = store
        .take(&store_key("sign-in", &state))
        .await
        .map_err(|error| unavailable(IdentityError::SessionsUnavailable(error.to_string())))?
        .ok_or_else(|| {
            refused(
                StatusCode::BAD_REQUEST,
                "this sign-in has expired or was used already; start again".into(),
            )
        })?;
    let (metadata, fetcher) = identity.sign_in_provider().await.map_err(unavailable)?;
    let token = exchange(sign_in, &metadata, fetcher, code, verifier)
        .await
        .map_err(|why| refused(StatusCode::BAD_GATEWAY, why))?;
    let caller = identity
        .caller(&token)
        .await
        .map_err(|error| refused(status_of(&error), error.to_string()))?;
    let expires_ms = session_end(caller.claims(), sign_in.longest_session.as_millis() as u64);
    let secret = identity
        .open_session(&caller, expires_ms)
        .await
        .map_err(unavailable)?;
    tracing::info!(
        caller = caller.id(),
        issuer = caller.issuer().unwrap_or_default(),
        "console sign-in"
    );
    Ok((secret, expires_ms))
}

/// The code exchanged for an access token at the provider's token endpoint.
async fn exchange(
    sign_in: &ProviderSignIn,
    metadata: &Metadata,
    fetcher: &Fetcher,
    code: String,
    verifier: String,
) -> Result<String, String> {
    let client = sign_in.client(metadata)?;
    let http = |request: oauth2::HttpRequest| send(fetcher.client().clone(), request);
    let answer = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(PkceCodeVerifier::new(verifier))
        .add_extra_param("resource", sign_in.identity.resource())
        .request_async(&http)
        .await
        .map_err(|error| match error {
            oauth2::RequestTokenError::ServerResponse(answer) => {
                format!(
                    "the identity provider refused the sign-in's code: {}",
                    answer.error()
                )
            }
            other => format!("the identity provider's token endpoint failed: {other}"),
        })?;
    Ok(answer.access_token().secret().clone())
}

/// One request of the `oauth2` crate, sent with toolgate's HTTP client (its deadline, no
/// redirects), its answer read within 1 MiB.
async fn send(
    client: reqwest::Client,
    request: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, std::io::Error> {
    let failed = |error: reqwest::Error| std::io::Error::other(error.without_url());
    let request = reqwest::Request::try_from(request).map_err(failed)?;
    let mut response = client.execute(request).await.map_err(failed)?;
    let mut answer = oauth2::http::Response::builder().status(response.status().as_u16());
    for (name, value) in response.headers() {
        answer = answer.header(name.as_str(), value.as_bytes());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if body.len() + chunk.len() > 1024 * 1024 {
            return Err(std::io::Error::other(
                "the token endpoint's answer is over 1 MiB",
            ));
        }
        body.extend_from_slice(&chunk);
    }
    answer.body(body).map_err(std::io::Error::other)
}

/// `POST {console}/sign-out`: the session ends here and now.
pub(super) async fn sign_out(
    State(served): State<Arc<super::Served>>,
    headers: HeaderMap,
) -> Response {
    let sign_in = match signing_in(&served) {
        Ok(sign_in) => sign_in,
        Err(refused) => return *refused,
    };
    // Only the console's own script sends JSON; a page elsewhere cannot without asking.
    if !declares_json(headers.get(header::CONTENT_TYPE)) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send Content-Type: application/json",
        )
            .into_response();
    }
    let mut ended = false;
    if let Some(secret) = cookie_value(&headers, SESSION_COOKIE) {
        ended = sign_in
            .identity
            .close_session(&secret)
            .await
            .unwrap_or(false);
    }
    let end_session = match sign_in.identity.sign_in_provider().await {
        Ok((metadata, _)) => metadata.end_session_endpoint.clone(),
        Err(_) => None,
    };
    let body = json!({"signed_out": ended, "end_session_endpoint": end_session});
    let mut response = axum::Json(body).into_response();
    set_cookie(
        response.headers_mut(),
        &cookie(SESSION_COOKIE, "", "/", 0, sign_in.secure()),
    );
    response
}

/// The console's sign-in (its routes exist only with one; a console without is told so).
fn signing_in(served: &super::Served) -> Result<&ProviderSignIn, Box<Response>> {
    served.sign_in.as_ref().ok_or_else(|| {
        let says = "this console does not sign in through a provider";
        Box::new(problem(StatusCode::NOT_FOUND, says, &served.at))
    })
}

fn status_of(error: &IdentityError) -> StatusCode {
    StatusCode::from_u16(error.status()).unwrap_or(StatusCode::UNAUTHORIZED)
}

/// A cookie scripts cannot read, sent only to this site (and along top-level navigations
/// from the provider back here, which `Lax` allows).
fn cookie(name: &str, value: &str, path: &str, max_age_secs: u64, secure: bool) -> String {
    let path = if path.is_empty() { "/" } else { path };
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={path}; Max-Age={max_age_secs}; HttpOnly; SameSite=Lax{secure}")
}

fn set_cookie(headers: &mut HeaderMap, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        headers.append(header::SET_COOKIE, value);
    }
}

/// A page saying why signing in failed, with the way back; its text is escaped.
fn problem(status: StatusCode, message: &str, at: &str) -> Response {
    let escaped = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    let page = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>Sign-in</title>\
         <p role=\"alert\">{escaped}</p><p><a href=\"{at}/\">Back to the console</a></p>"
    );
    let mut response = super::asset(page, "text/html; charset=utf-8");
    *response.status_mut() = status;
    response
}
