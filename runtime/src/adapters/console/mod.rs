//! An approval console in the browser (feature `console`): the calls waiting for the signed-in
//! person's decision, approve or deny with a reason, and a live feed of their own calls.
//!
//! The console is a plain page and one small script, without a build step. It holds no data
//! and makes no decisions of its own: everything it shows comes from the [HTTP
//! router](crate::adapters::http) (`GET /me`, `GET /approvals`, `GET /events`, `GET /tools`), and
//! every decision goes through `POST /approvals/approve` and `POST /approvals/deny`, so the
//! rules are the registry's (who may decide which tool, single use, expiry), exactly as over
//! HTTP or in process. Merge it with the router, on the same site:
//!
//! ```
//! use axum::http::request::Parts;
//! use toolgate::console::{Console, SignIn};
//! use toolgate::http::{AuthError, HttpOptions, router};
//! use toolgate::{Caller, Registry};
//!
//! let registry = Registry::builder().roles(["public", "admin"]).approver_role("admin").build().unwrap();
//! let authenticate = |_: &Parts| -> Result<Caller, AuthError> { Ok(Caller::new("ann", "admin")) };
//! let console = Console::new()
//!     .at("/console")
//!     .api("/api")
//!     .title("Clinic approvals")
//!     .sign_in(SignIn::Session)
//!     .components("toolgate.component('pet_card', (result) => toolgate.el('b', {}, result.name));");
//! let app: axum::Router = axum::Router::new()
//!     .nest("/api", router(registry, authenticate, HttpOptions::default()))
//!     .merge(console.router());
//! # let _ = app;
//! ```
//!
//! **Who is signed in** is the application's business, as for the router: with
//! [`SignIn::Session`] the page's requests carry the application's cookies; with
//! [`SignIn::BearerToken`] the page asks for a token, keeps it for the browser tab only
//! (`sessionStorage`) and sends it as `Authorization: Bearer`. The console's own files are
//! the same for everyone and reveal nothing.
//!
//! **Results rendered by components.** A tool may name a component for its result
//! (`#[tool(ui = "pet_card")]`); the name travels with outcomes and events, and the console
//! renders the result with the component the application registered in its
//! [`components`](Console::components) script: `toolgate.component(name, (result, outcome)
//! => Node)`. `toolgate.el(tag, attributes, ...children)` builds elements with text children,
//! never markup. A result without a component, or whose component fails, is shown as JSON.
//!
//! **Nothing a call carries can run in the page.** Arguments, results, reasons and names are
//! put in as text, never as markup; the page is served with a Content-Security-Policy that
//! allows only its own scripts (no inline script, no `eval`), and may not be framed.

mod assets;
#[cfg(feature = "oidc")]
mod sign_in;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

#[cfg(feature = "oidc")]
pub use sign_in::ProviderSignIn;

/// How the person using the console is signed in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignIn {
    /// By the application, before the console opens (a session cookie): the console's
    /// requests carry the browser's cookies for this site.
    #[default]
    Session,
    /// The console asks for a bearer token, keeps it for the browser tab, and sends it as
    /// `Authorization: Bearer <token>`.
    BearerToken,
}

/// The console's settings; [`router`](Console::router) serves it.
#[derive(Debug, Clone)]
pub struct Console {
    at: String,
    api: String,
    title: String,
    sign_in: SignIn,
    components: String,
    #[cfg(feature = "oidc")]
    provider: Option<ProviderSignIn>,
}

impl Default for Console {
    fn default() -> Self {
        Console::new()
    }
}

impl Console {
    /// A console at `/console`, for a router mounted at the site's root, signed in by
    /// session.
    pub fn new() -> Self {
        Console {
            at: "/console".to_owned(),
            api: String::new(),
            title: "Approvals".to_owned(),
            sign_in: SignIn::Session,
            components: String::new(),
            #[cfg(feature = "oidc")]
            provider: None,
        }
    }

    /// Where the console is on the site (default `/console`): the page answers there, with
    /// or without a final `/`, and its files below it.
    ///
    /// # Panics
    ///
    /// If `path` does not start with `/` or has characters other than ASCII letters,
    /// digits, `/`, `_`, `-`, `.` and `~` (it is written into the page as is).
    pub fn at(mut self, path: &str) -> Self {
        assert!(
            path.starts_with('/')
                && path
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/_-.~".contains(&b)),
            "the console's path {path:?} must start with `/` and hold only ASCII letters, \
             digits, `/`, `_`, `-`, `.` and `~`"
        );
        self.at = path.trim_end_matches('/').to_owned();
        self
    }

    /// Where the [HTTP router](crate::adapters::http) is mounted on the same site, e.g. `"/api"`
    /// (default: the root).
    pub fn api(mut self, base: impl Into<String>) -> Self {
        self.api = base.into().trim_end_matches('/').to_owned();
        self
    }

    /// The page's title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// How the person is signed in (default [`SignIn::Session`]).
    pub fn sign_in(mut self, sign_in: SignIn) -> Self {
        self.sign_in = sign_in;
        self
    }

    /// People sign in through the identity provider (feature `oidc`): the page offers a
    /// "Sign in" that goes to the provider and comes back with a session cookie (see
    /// [`ProviderSignIn`]), and a field for a token pasted by hand beside it. The router's
    /// authentication must be the same [`Identity`](crate::identity::Identity), which reads
    /// the session's cookie.
    ///
    /// # Panics
    ///
    /// If the sign-in's redirect URI is not an absolute http(s) URL with a path (the
    /// console answers at that path).
    #[cfg(feature = "oidc")]
    pub fn sign_in_through(mut self, sign_in: ProviderSignIn) -> Self {
        let _ = sign_in.callback_path();
        self.provider = Some(sign_in);
        self
    }

    /// The application's script registering result components, run after the console's
    /// own: `toolgate.component("pet_card", (result, outcome) => toolgate.el("div", {}, ...))`.
    pub fn components(mut self, script: impl Into<String>) -> Self {
        self.components = script.into();
        self
    }

    /// The console's routes, at [`at`](Self::at): merge them with the application's
    /// (`app.merge(console.router())`).
    pub fn router(self) -> Router {
        let config = json!({
            "api": self.api,
            "title": self.title,
            "sign_in": self.sign_in_name(),
        })
        .to_string();
        let at = self.at;
        let served = Arc::new(Served {
            page: Bytes::from(assets::PAGE.replace("{{base}}", &at)),
            config: Bytes::from(config),
            components: Bytes::from(self.components),
            at: at.clone(),
            #[cfg(feature = "oidc")]
            sign_in: self.provider,
        });
        let root = if at.is_empty() { "/" } else { at.as_str() };
        let mut router = Router::new().route(root, get(page));
        if !at.is_empty() {
            router = router.route(&format!("{at}/"), get(page));
        }
        router = router
            .route(
                &format!("{at}/console.js"),
                get(|| async { script(assets::SCRIPT) }),
            )
            .route(
                &format!("{at}/call_form.js"),
                get(|| async { script(assets::CALL_FORM) }),
            )
            .route(
                &format!("{at}/usage.js"),
                get(|| async { script(assets::USAGE) }),
            )
            .route(
                &format!("{at}/console.css"),
                get(|| async { asset(assets::STYLE, "text/css") }),
            )
            .route(&format!("{at}/components.js"), get(components))
            .route(&format!("{at}/config.json"), get(settings));
        #[cfg(feature = "oidc")]
        let router = match &served.sign_in {
            Some(sign_in) => router
                .route(&format!("{at}/sign-in"), get(sign_in::start))
                .route(&sign_in.callback_path(), get(sign_in::callback))
                .route(
                    &format!("{at}/sign-out"),
                    axum::routing::post(sign_in::sign_out),
                ),
            None => router,
        };
        router.with_state(served)
    }

    /// How the page signs people in, as its script reads it.
    fn sign_in_name(&self) -> &'static str {
        #[cfg(feature = "oidc")]
        if self.provider.is_some() {
            return "provider";
        }
        match self.sign_in {
            SignIn::Session => "session",
            SignIn::BearerToken => "bearer_token",
        }
    }
}

/// What the routes serve, fixed when the router is made (cheap to clone per request).
struct Served {
    page: Bytes,
    config: Bytes,
    components: Bytes,
    /// Where the console is.
    at: String,
    #[cfg(feature = "oidc")]
    sign_in: Option<ProviderSignIn>,
}

async fn page(State(served): State<Arc<Served>>) -> Response {
    asset(served.page.clone(), "text/html; charset=utf-8")
}

async fn components(State(served): State<Arc<Served>>) -> Response {
    script(served.components.clone())
}

async fn settings(State(served): State<Arc<Served>>) -> Response {
    asset(served.config.clone(), "application/json")
}

fn script(source: impl Into<axum::body::Body>) -> Response {
    asset(source, "text/javascript; charset=utf-8")
}

/// A file of the console, with the headers that keep anything a call carries from running.
fn asset(body: impl Into<axum::body::Body>, content_type: &'static str) -> Response {
    let mut response = (StatusCode::OK, body.into()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(assets::CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
