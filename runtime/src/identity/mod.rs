//! Who is calling, from an identity provider's access tokens (feature `oidc`): OAuth 2.1 /
//! OpenID Connect bearer tokens checked, and their claims mapped to a role of the registry.
//!
//! An [`Identity`] trusts one or more [`Issuer`]s (Keycloak, Auth0, Entra ID, Okta, Google,
//! Dex, ...) and names this resource's audience. It is an
//! [`Authenticate`](crate::http::Authenticate) hook for the [HTTP router](crate::http), MCP
//! over HTTP and the [console](crate::console); in process, [`Identity::caller`] turns a
//! token into a [`Caller`].
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate::Registry;
//! use toolgate::identity::{Identity, Issuer};
//!
//! let registry = Registry::builder().roles(["public", "customer", "staff", "admin"]).build()?;
//! let identity = Identity::builder()
//!     .issuer(Issuer::new("https://login.example.com/realms/clinic"))
//!     .audience("https://clinic.example.com/mcp")
//!     .role_from_claim("groups", "owners", "customer")
//!     .role_from_claim("groups", "vets", "staff")
//!     .role_from_claim("/realm_access/roles", "clinic-admin", "admin")
//!     .build(registry.roles())?;
//! let app = toolgate::http::router(registry, identity.clone(), Default::default())
//!     .merge(identity.metadata_router()); // /.well-known/oauth-protected-resource/mcp
//! # let _ = app;
//! # Ok(())
//! # }
//! ```
//!
//! # Checking a token
//!
//! - **JWTs** are checked against the issuer's published keys (JWKS), found from its
//!   metadata (`/.well-known/openid-configuration`, else `oauth-authorization-server`):
//!   the signature (by `jsonwebtoken`; no cryptography here), `iss`, `aud` (this resource:
//!   a token minted for another service is refused, RFC 8707), `exp` and `nbf` with a
//!   leeway. Only the application's asymmetric algorithms are accepted: never `none`, never
//!   `HS*` (so a public key cannot pose as an HMAC secret). `jku`, `x5u` and keys embedded
//!   in the header are never followed.
//! - **Keys** are fetched when first needed, again when older than
//!   [`key_max_age`](IdentityBuilder::key_max_age) (a removed key stops working), and when a
//!   token names a key not held (a rotation, seen without a restart) — at most once a
//!   [`key_refetch_interval`](IdentityBuilder::key_refetch_interval), one fetch at a time,
//!   whatever key ids tokens make up. While the provider is down the keys held keep working;
//!   with none held, requests are answered `503`, not `401`.
//! - **Opaque tokens** go to the introspection endpoint of the issuer set up for it
//!   (RFC 7662); an inactive one is remembered briefly by its SHA-256.
//! - A token checked once is **remembered** in this process's memory with its caller until
//!   it expires (an introspected one within
//!   [`introspection_max_age`](IdentityBuilder::introspection_max_age)), and, for a JWT,
//!   while the keys that checked it are still the issuer's current ones: presenting it
//!   again costs a hash and a lookup, not a signature check.
//! - Tokens over [`max_token_bytes`](IdentityBuilder::max_token_bytes) are refused unread.
//!
//! # From claims to a role
//!
//! The caller's id is the `sub` claim (or `client_id`, or the [claim
//! set](IdentityBuilder::id_claim)), qualified as `name#id` by the issuer's name whenever
//! several issuers are trusted. Its role comes from [rules](IdentityBuilder::role_from_claim):
//! a rule matches when its claim is a string equal to the value, an array holding it, or
//! `scope` listing it; **when several match, the highest role wins**; when none does, the
//! [default role](IdentityBuilder::default_role), or `403` saying which claims would do.
//! [Scope caps](IdentityBuilder::scope_caps_role) then lower it, and
//! [required scopes](IdentityBuilder::require_scope) refuse tokens without them
//! (`403 insufficient_scope`). The claims stay on the caller
//! ([`Caller::claims`]) for the application's rules; the audit names the caller's id and
//! the token's issuer. No part of a token is logged, audited or echoed.
//!
//! # MCP's authorization
//!
//! [`metadata_router`](Identity::metadata_router) publishes the Protected Resource Metadata
//! (RFC 9728); a refused request gets `401` with `WWW-Authenticate: Bearer
//! resource_metadata="...", scope="..."` (or `403 insufficient_scope` naming the scope), so
//! an MCP client can find where to sign in.

mod builder;
mod discovery;
mod error;
mod fetch;
mod introspection;
mod jwt;
mod keys;
mod provider;
mod remembered;
mod roles;
mod session;

use std::sync::Arc;

use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value, json};
use smol_str::SmolStr;

pub use builder::{IdentityBuilder, Issuer};
pub use error::{IdentityConfigError, IdentityError};

#[cfg(feature = "console")]
pub(crate) use discovery::Metadata;
pub(crate) use discovery::split_origin;
pub(crate) use fetch::Fetcher;
pub(crate) use session::SESSION_COOKIE;
#[cfg(feature = "console")]
pub(crate) use session::{new_secret, session_end, store_key};

use crate::caller::Caller;
use crate::store::SessionStore;
use introspection::Introspection;
use provider::{Provider, Refresh};
use remembered::Remembered;
use roles::RoleMap;

/// Tokens from trusted issuers, turned into callers. Cheap to clone (one shared state: the
/// keys fetched and the introspection answers remembered are shared by every clone).
#[derive(Clone)]
pub struct Identity {
    inner: Arc<Inner>,
}

struct Inner {
    issuers: Vec<IssuerState>,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    max_token_bytes: usize,
    id_claim: Option<String>,
    roles: RoleMap,
    refresh: Refresh,
    fetcher: Fetcher,
    sessions: Option<Arc<dyn SessionStore>>,
    resource_name: Option<String>,
    /// Tokens checked already, by digest.
    remembered: Remembered,
}

/// One trusted issuer: its settings, what was fetched of it, and its tokens' checks.
struct IssuerState {
    issuer: Issuer,
    /// `name#`, when ids are qualified.
    prefix: Option<SmolStr>,
    /// The checks of its tokens, one per accepted algorithm.
    checks: Vec<(Algorithm, Validation)>,
    provider: Provider,
    introspection: Option<Introspection>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let issuers: Vec<&str> = self
            .inner
            .issuers
            .iter()
            .map(|i| i.issuer.url.as_str())
            .collect();
        formatter
            .debug_struct("Identity")
            .field("issuers", &issuers)
            .field("audiences", &self.inner.audiences)
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// Settings to fill in; see the [module](self).
    pub fn builder() -> IdentityBuilder {
        IdentityBuilder::default()
    }

    /// The caller a token identifies, or why it identifies none.
    pub async fn caller(&self, token: &str) -> Result<Caller, IdentityError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(IdentityError::NoToken);
        }
        if token.len() > self.inner.max_token_bytes {
            return Err(IdentityError::TooLarge {
                bytes: token.len(),
                limit: self.inner.max_token_bytes,
            });
        }
        if let Some(caller) = self.remembered_caller(token) {
            return Ok(caller);
        }
        if jwt::looks_like_jwt(token) {
            self.jwt_caller(token).await
        } else {
            self.opaque_caller(token).await
        }
    }

    /// The caller of a token checked before that would pass again now, without waiting.
    pub(crate) fn remembered_caller(&self, token: &str) -> Option<Caller> {
        let inner = &self.inner;
        let current = |keys: &Arc<keys::KeySet>| {
            let holds = |state: &IssuerState| state.provider.still_holds(keys, inner.refresh);
            inner.issuers.iter().any(holds)
        };
        inner.remembered.caller(token.trim(), current)
    }

    /// Asks every issuer for its metadata and keys now, so that a wrong address shows at
    /// start rather than at the first request. Failing is not fatal: requests keep asking.
    pub async fn ready(&self) -> Result<(), IdentityError> {
        let inner = &self.inner;
        for state in &inner.issuers {
            if state.issuer.jwks_uri.is_none() {
                state
                    .provider
                    .metadata(&inner.fetcher, inner.refresh)
                    .await?;
            }
            let alg = inner.algorithms[0];
            state
                .provider
                .keys_for(None, alg, &inner.fetcher, inner.refresh)
                .await?;
        }
        Ok(())
    }

    /// This resource's identifier: the first [audience](IdentityBuilder::audience).
    pub fn resource(&self) -> &str {
        &self.inner.audiences[0]
    }

    /// The Protected Resource Metadata (RFC 9728) of this resource: its identifier, the
    /// issuers that may sign for it, the scopes its rules name, and that tokens go in the
    /// `Authorization` header.
    pub fn resource_metadata(&self) -> Value {
        let inner = &self.inner;
        let servers: Vec<&str> = inner
            .issuers
            .iter()
            .map(|i| i.issuer.url.as_str())
            .collect();
        let mut metadata = json!({
            "resource": self.resource(),
            "authorization_servers": servers,
            "bearer_methods_supported": ["header"],
        });
        let scopes = inner.roles.scopes();
        if !scopes.is_empty() {
            metadata["scopes_supported"] = json!(scopes);
        }
        if let Some(name) = &inner.resource_name {
            metadata["resource_name"] = json!(name);
        }
        metadata
    }

    /// Where the resource's metadata is published: `/.well-known/oauth-protected-resource`
    /// followed by the resource's path, on its origin (RFC 9728 §3.1); `None` when the
    /// resource is not an http(s) URL.
    pub fn resource_metadata_url(&self) -> Option<String> {
        let (origin, path) = discovery::split_origin(self.resource())?;
        origin.starts_with("http").then(|| {
            format!(
                "{origin}/.well-known/oauth-protected-resource{}",
                path.trim_end_matches('/')
            )
        })
    }

    /// The scopes a refused request is told to ask for (`scope` of the challenge).
    pub(crate) fn challenge_scope(&self) -> Option<String> {
        let scopes = self.inner.roles.scopes();
        (!scopes.is_empty()).then(|| scopes.join(" "))
    }

    /// Where people's sessions are kept, if the application set a store.
    pub(crate) fn sessions(&self) -> Option<&Arc<dyn SessionStore>> {
        self.inner.sessions.as_ref()
    }

    /// The first issuer's metadata (the one people sign in with), and the HTTP client.
    #[cfg(feature = "console")]
    pub(crate) async fn sign_in_provider(
        &self,
    ) -> Result<(Arc<Metadata>, &Fetcher), IdentityError> {
        let inner = &self.inner;
        let metadata = inner.issuers[0]
            .provider
            .metadata(&inner.fetcher, inner.refresh)
            .await?;
        Ok((metadata, &inner.fetcher))
    }

    /// The caller of claims kept in a session of `issuer`, mapped by today's rules.
    pub(crate) fn caller_of_kept(
        &self,
        issuer: &str,
        claims: Map<String, Value>,
    ) -> Result<Caller, IdentityError> {
        let state = self
            .inner
            .issuers
            .iter()
            .find(|state| state.issuer.url == issuer)
            .ok_or(IdentityError::UntrustedIssuer)?;
        self.caller_of(state, claims)
    }

    async fn jwt_caller(&self, token: &str) -> Result<Caller, IdentityError> {
        let inner = &self.inner;
        let seen = jwt::peek(token, &inner.algorithms)?;
        let state = inner
            .issuers
            .iter()
            .find(|state| state.issuer.url == seen.issuer)
            .ok_or(IdentityError::UntrustedIssuer)?;
        let alg = seen.header.alg;
        let kid = seen.header.kid.as_deref();
        let keys = state
            .provider
            .keys_for(kid, alg, &inner.fetcher, inner.refresh)
            .await?;
        let checks = state
            .checks
            .iter()
            .find(|(accepted, _)| *accepted == alg)
            .map(|(_, checks)| checks)
            .ok_or_else(|| IdentityError::AlgorithmNotAllowed(format!("{alg:?}")))?;
        let claims = jwt::verify(token, keys.candidates(kid, alg), checks, self.resource())?;
        let until = until_exp(&claims, None);
        let caller = self.caller_of(state, claims)?;
        inner
            .remembered
            .keep(token, caller.clone(), until, Some(keys));
        Ok(caller)
    }

    async fn opaque_caller(&self, token: &str) -> Result<Caller, IdentityError> {
        let inner = &self.inner;
        let Some((state, introspection)) = inner
            .issuers
            .iter()
            .find_map(|state| state.introspection.as_ref().map(|found| (state, found)))
        else {
            return Err(IdentityError::Malformed(
                "it is not a JWT, and no issuer is set up to introspect opaque tokens",
            ));
        };
        let digest = introspection::digest(token);
        introspection.may_look_up(&digest)?;
        let metadata = state
            .provider
            .metadata(&inner.fetcher, inner.refresh)
            .await?;
        let unavailable = |why: String| IdentityError::ProviderUnavailable {
            issuer: state.issuer.url.clone(),
            why,
        };
        let endpoint = metadata
            .introspection_endpoint
            .as_deref()
            .ok_or_else(|| unavailable("its metadata names no `introspection_endpoint`".into()))?;
        let client = &introspection.client;
        let form = [("token", token), ("token_type_hint", "access_token")];
        let answer: Map<String, Value> = inner
            .fetcher
            .post_form(endpoint, &form, (&client.id, &client.secret))
            .await
            .map_err(|why| unavailable(format!("introspection: {why}")))?;
        let Some(claims) = introspection::active_claims(answer) else {
            introspection.inactive(digest);
            return Err(IdentityError::Inactive);
        };
        self.check_introspected(state, &claims)?;
        let until = until_exp(&claims, Some(introspection.max_age));
        let caller = self.caller_of(state, claims)?;
        inner.remembered.keep(token, caller.clone(), until, None);
        Ok(caller)
    }

    /// An introspection answer's own claims, where it gives them: the issuer, this
    /// resource's audience, and the token's times.
    fn check_introspected(
        &self,
        state: &IssuerState,
        claims: &Map<String, Value>,
    ) -> Result<(), IdentityError> {
        let inner = &self.inner;
        if claims
            .get("iss")
            .is_some_and(|iss| iss.as_str() != Some(&state.issuer.url))
        {
            return Err(IdentityError::UntrustedIssuer);
        }
        if let Some(aud) = claims.get("aud") {
            let ours = |value: &Value| {
                value
                    .as_str()
                    .is_some_and(|aud| inner.audiences.iter().any(|a| a == aud))
            };
            let for_us = match aud {
                Value::Array(items) => items.iter().any(ours),
                other => ours(other),
            };
            if !for_us {
                return Err(IdentityError::WrongAudience {
                    expected: self.resource().to_owned(),
                });
            }
        }
        let now = crate::util::time::now_secs();
        let time = |name: &str| claims.get(name).and_then(Value::as_u64);
        if time("exp").is_some_and(|exp| exp.saturating_add(inner.leeway) < now) {
            return Err(IdentityError::Expired);
        }
        if time("nbf").is_some_and(|nbf| nbf > now.saturating_add(inner.leeway)) {
            return Err(IdentityError::NotYetValid);
        }
        Ok(())
    }

    /// The caller of a checked token's claims.
    fn caller_of(
        &self,
        state: &IssuerState,
        claims: Map<String, Value>,
    ) -> Result<Caller, IdentityError> {
        let id = self.id_of(&claims)?;
        let role = self.inner.roles.role_for(&claims)?;
        let id = match &state.prefix {
            Some(prefix) => SmolStr::from(format!("{prefix}{id}")),
            None => SmolStr::from(id),
        };
        Ok(Caller::new(id, role).with_identity(state.issuer.url.as_str(), claims))
    }

    fn id_of<'c>(&self, claims: &'c Map<String, Value>) -> Result<&'c str, IdentityError> {
        let named = |name: &str| {
            claims
                .get(name)
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
        };
        match &self.inner.id_claim {
            Some(claim) => named(claim).ok_or_else(|| IdentityError::MissingClaim(claim.clone())),
            None => named("sub")
                .or_else(|| named("client_id"))
                .ok_or_else(|| IdentityError::MissingClaim("sub".to_owned())),
        }
    }
}

/// When a checked token stops being answered from memory: at its `exp`, and no later than
/// `longest` from now when that is given.
fn until_exp(
    claims: &Map<String, Value>,
    longest: Option<std::time::Duration>,
) -> std::time::Instant {
    let now = std::time::Instant::now();
    let left = claims
        .get("exp")
        .and_then(Value::as_u64)
        .map(|exp| exp.saturating_sub(crate::util::time::now_secs()))
        .map(std::time::Duration::from_secs);
    match (left, longest) {
        (Some(left), Some(longest)) => now + left.min(longest),
        (Some(left), None) => now + left,
        (None, Some(longest)) => now + longest,
        (None, None) => now,
    }
}
