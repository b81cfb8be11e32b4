//! The settings of an [`Identity`]: trusted issuers, this resource's audience, accepted
//! algorithms, and how claims become roles. Checked together by
//! [`build`](IdentityBuilder::build), which names every problem at once.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::Algorithm;
use smol_str::SmolStr;

use super::error::IdentityConfigError;
use super::fetch::Fetcher;
use super::introspection::{Introspection, IntrospectionClient};
use super::jwt::checks;
use super::provider::{Provider, Refresh};
use super::roles::{ClaimPath, RoleMap, Rule};
use super::{Identity, Inner, IssuerState};
use crate::roles::Roles;
use crate::store::SessionStore;

/// The asymmetric algorithms accepted when the application names none.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// One trusted token issuer (an OpenID provider or OAuth authorization server), named by
/// its issuer identifier exactly as its tokens' `iss` claim says it.
///
/// ```
/// use toolgate::identity::Issuer;
///
/// let corporate = Issuer::new("https://login.example.com/realms/staff").named("staff");
/// let partners = Issuer::new("https://partners.example.org")
///     .introspection("toolgate", "the-client-secret"); // for its opaque tokens
/// # let _ = (corporate, partners);
/// ```
#[derive(Clone)]
pub struct Issuer {
    pub(crate) url: String,
    pub(crate) name: Option<String>,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection: Option<IntrospectionClient>,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Issuer")
            .field("url", &self.url)
            .field("name", &self.name)
            .field("jwks_uri", &self.jwks_uri)
            .field("introspects", &self.introspection.is_some())
            .finish()
    }
}

impl Issuer {
    /// An issuer whose metadata (and so its keys and endpoints) is discovered from its
    /// identifier.
    pub fn new(url: impl Into<String>) -> Self {
        Issuer {
            url: url.into(),
            name: None,
            jwks_uri: None,
            introspection: None,
        }
    }

    /// A short name that qualifies its users' ids (`staff#ana`). Ids are qualified by the
    /// issuer's name, or by its identifier, whenever more than one issuer is trusted, so
    /// users of two providers never share runs, grants, limits or history.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Where its keys are, when its metadata cannot be discovered.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// Opaque (non-JWT) tokens are looked up at its introspection endpoint (RFC 7662),
    /// with these client credentials. One issuer at most may introspect.
    pub fn introspection(
        mut self,
        client_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Self {
        self.introspection = Some(IntrospectionClient {
            id: client_id.into(),
            secret: secret.into(),
        });
        self
    }
}

/// Settings of an [`Identity`]; see [`Identity::builder`].
#[derive(Default)]
pub struct IdentityBuilder {
    issuers: Vec<Issuer>,
    audiences: Vec<String>,
    algorithms: Vec<String>,
    rules: Vec<(String, String, String)>,
    default_role: Option<String>,
    caps: Vec<(String, String)>,
    required_scopes: Vec<String>,
    id_claim: Option<String>,
    leeway: Option<Duration>,
    max_token_bytes: Option<usize>,
    key_max_age: Option<Duration>,
    key_refetch_interval: Option<Duration>,
    fetch_timeout: Option<Duration>,
    introspection_rate: Option<u32>,
    introspection_max_age: Option<Duration>,
    sessions: Option<Arc<dyn SessionStore>>,
    resource_name: Option<String>,
}

impl IdentityBuilder {
    /// Trusts tokens of this issuer.
    pub fn issuer(mut self, issuer: Issuer) -> Self {
        self.issuers.push(issuer);
        self
    }

    /// This resource's identifier (RFC 8707), which a token's `aud` must name: the URL the
    /// clients use, e.g. `https://api.example.com/mcp`. Called again, another accepted
    /// audience; the first is the one published in the resource's metadata.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The signature algorithms accepted (default: `RS256`, `RS384`, `RS512`, `PS256`,
    /// `PS384`, `PS512`, `ES256`, `ES384`, `EdDSA`). Only asymmetric ones can be named.
    pub fn algorithms<I, S>(mut self, algorithms: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.algorithms = algorithms.into_iter().map(Into::into).collect();
        self
    }

    /// A token whose `claim` holds `value` is given `role` (see [the rule when several
    /// match](super#from-claims-to-a-role)). `claim` is a claim's name, or a JSON Pointer
    /// into nested claims (`/realm_access/roles`).
    pub fn role_from_claim(
        mut self,
        claim: impl Into<String>,
        value: impl Into<String>,
        role: impl Into<String>,
    ) -> Self {
        self.rules.push((claim.into(), value.into(), role.into()));
        self
    }

    /// The role of a valid token that no rule maps (default: none, such a token is refused
    /// with `403`).
    pub fn default_role(mut self, role: impl Into<String>) -> Self {
        self.default_role = Some(role.into());
        self
    }

    /// A token holding `scope` may act at most as `role`. With any cap set, a token's role
    /// is capped by the highest of its scopes', and a token with none of them is refused
    /// (`403 insufficient_scope`).
    pub fn scope_caps_role(mut self, scope: impl Into<String>, role: impl Into<String>) -> Self {
        self.caps.push((scope.into(), role.into()));
        self
    }

    /// Every token must hold this scope (else `403 insufficient_scope` naming it).
    pub fn require_scope(mut self, scope: impl Into<String>) -> Self {
        self.required_scopes.push(scope.into());
        self
    }

    /// The claim a caller's id comes from (default `sub`, or `client_id` for a token that
    /// has no `sub`).
    pub fn id_claim(mut self, claim: impl Into<String>) -> Self {
        self.id_claim = Some(claim.into());
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = Some(leeway);
        self
    }

    /// Longer tokens are refused unread (default 16 KiB).
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = Some(bytes);
        self
    }

    /// Keys older than this are fetched again, so a key the issuer removed stops working
    /// (default 10 minutes). While the issuer cannot be reached, the keys held keep working.
    pub fn key_max_age(mut self, age: Duration) -> Self {
        self.key_max_age = Some(age);
        self
    }

    /// The shortest time between two fetches of an issuer's metadata or keys, whatever
    /// tokens arrive (default 30 s): a token naming an unknown key fetches the keys again
    /// only this long after the last fetch.
    pub fn key_refetch_interval(mut self, interval: Duration) -> Self {
        self.key_refetch_interval = Some(interval);
        self
    }

    /// How long a request to a provider may take (default 5 s).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = Some(timeout);
        self
    }

    /// Introspection lookups per second at most (default 50); past it, unknown opaque
    /// tokens are answered `503` until the budget refills.
    pub fn introspection_rate(mut self, per_second: u32) -> Self {
        self.introspection_rate = Some(per_second);
        self
    }

    /// Longest an introspection answer is trusted, even for a token that lives longer
    /// (default 5 minutes): a revoked token stops working within it.
    pub fn introspection_max_age(mut self, age: Duration) -> Self {
        self.introspection_max_age = Some(age);
        self
    }

    /// Where sessions of people signed in through the [console](crate::console) are kept
    /// (e.g. [`Stores::sessions`](crate::store::Stores::sessions)): with it, a request
    /// carrying a session's cookie is its person's.
    pub fn sessions(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    /// A name for people in the resource's metadata (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The identity, for the registry's `roles`; every problem is named at once. No
    /// provider is asked yet (see [`Identity::ready`]).
    pub fn build(self, roles: &Roles) -> Result<Identity, IdentityConfigError> {
        install_crypto();
        let mut problems = Vec::new();
        let algorithms = self.accepted_algorithms(&mut problems);
        let role_map = self.role_map(roles, &mut problems);
        self.check_issuers(&mut problems);
        if !problems.is_empty() {
            return Err(IdentityConfigError { problems });
        }
        Ok(self.assemble(algorithms, role_map))
    }

    fn assemble(self, algorithms: Vec<Algorithm>, roles: RoleMap) -> Identity {
        let leeway = self.leeway.unwrap_or(Duration::from_secs(30)).as_secs();
        let qualify = self.issuers.len() > 1;
        let rate = self.introspection_rate.unwrap_or(50);
        let trust = self
            .introspection_max_age
            .unwrap_or(Duration::from_secs(300));
        let issuers = self
            .issuers
            .into_iter()
            .map(|issuer| IssuerState {
                prefix: issuer
                    .name
                    .clone()
                    .or_else(|| qualify.then(|| issuer.url.clone()))
                    .map(|name| SmolStr::from(format!("{name}#"))),
                checks: algorithms
                    .iter()
                    .map(|alg| (*alg, checks(*alg, &issuer.url, &self.audiences, leeway)))
                    .collect(),
                provider: Provider::new(issuer.url.clone(), issuer.jwks_uri.clone()),
                introspection: issuer
                    .introspection
                    .clone()
                    .map(|client| Introspection::new(client, rate, trust)),
                issuer,
            })
            .collect();
        Identity {
            inner: Arc::new(Inner {
                issuers,
                audiences: self.audiences,
                algorithms,
                leeway,
                max_token_bytes: self.max_token_bytes.unwrap_or(16 * 1024),
                id_claim: self.id_claim,
                roles,
                refresh: Refresh {
                    max_age: self.key_max_age.unwrap_or(Duration::from_secs(600)),
                    min_interval: self.key_refetch_interval.unwrap_or(Duration::from_secs(30)),
                },
                fetcher: Fetcher::new(self.fetch_timeout.unwrap_or(Duration::from_secs(5))),
                sessions: self.sessions,
                resource_name: self.resource_name,
                remembered: Default::default(),
            }),
        }
    }

    fn accepted_algorithms(&self, problems: &mut Vec<String>) -> Vec<Algorithm> {
        if self.algorithms.is_empty() {
            return DEFAULT_ALGORITHMS.to_vec();
        }
        let mut accepted = Vec::new();
        for name in &self.algorithms {
            match name.parse::<Algorithm>() {
                Ok(alg) if DEFAULT_ALGORITHMS.contains(&alg) => accepted.push(alg),
                Ok(_) => problems.push(format!(
                    "algorithm `{name}` is symmetric (a shared secret): an issuer's published \
                     keys are public, so only asymmetric algorithms are accepted ({})",
                    names(&DEFAULT_ALGORITHMS)
                )),
                Err(_) => problems.push(format!(
                    "algorithm `{name}` is not one of {}",
                    names(&DEFAULT_ALGORITHMS)
                )),
            }
        }
        accepted
    }

    fn role_map(&self, roles: &Roles, problems: &mut Vec<String>) -> RoleMap {
        let known = roles.names().join(", ");
        let mut rank = |role: &str, place: String| {
            let found = roles.rank(role);
            if found.is_none() {
                problems.push(format!("{place} names role `{role}`, which is not one of the registry's roles ({known})"));
            }
            found.unwrap_or(0)
        };
        let rules = self
            .rules
            .iter()
            .map(|(claim, value, role)| Rule {
                claim: ClaimPath::new(claim.clone()),
                value: value.clone(),
                rank: rank(
                    role,
                    format!("the rule for claim `{claim}` holding `{value}`"),
                ),
            })
            .collect();
        let default = self
            .default_role
            .as_ref()
            .map(|role| rank(role, "the default role".to_owned()));
        let caps = self
            .caps
            .iter()
            .map(|(scope, role)| {
                (
                    scope.clone(),
                    rank(role, format!("the cap of scope `{scope}`")),
                )
            })
            .collect();
        RoleMap {
            names: roles.names().iter().map(SmolStr::from).collect(),
            rules,
            default,
            caps,
            required_scopes: self.required_scopes.clone(),
        }
    }

    fn check_issuers(&self, problems: &mut Vec<String>) {
        if self.issuers.is_empty() {
            problems.push("no issuer is trusted: add one with `.issuer(Issuer::new(url))`".into());
        }
        if self.audiences.is_empty() {
            problems.push(
                "no audience is set: `.audience(url)` names this resource, so that a token \
                 issued for another service is refused"
                    .into(),
            );
        }
        let mut seen: Vec<&str> = Vec::new();
        for issuer in &self.issuers {
            let qualifier = issuer.name.as_deref().unwrap_or(&issuer.url);
            if seen.contains(&qualifier) {
                problems.push(format!("two issuers share the name `{qualifier}`"));
            }
            seen.push(qualifier);
            if issuer
                .name
                .as_deref()
                .is_some_and(|name| name.contains('#') || name.is_empty())
            {
                problems.push(format!(
                    "issuer name `{qualifier}` must be non-empty and hold no `#` (it prefixes ids as `name#id`)"
                ));
            }
            if !(issuer.url.starts_with("https://") || issuer.url.starts_with("http://"))
                || issuer.url.contains(['#', '?'])
            {
                problems.push(format!(
                    "issuer `{}` is not an http(s) URL without query or fragment",
                    issuer.url
                ));
            }
        }
        if self
            .issuers
            .iter()
            .filter(|i| i.introspection.is_some())
            .count()
            > 1
        {
            problems.push(
                "more than one issuer introspects: an opaque token does not say whose it is, \
                 so only one issuer may take them"
                    .into(),
            );
        }
    }
}

fn names(algorithms: &[Algorithm]) -> String {
    algorithms
        .iter()
        .map(|alg| format!("{alg:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The process's JOSE cryptography: `jsonwebtoken` on aws-lc (already the TLS library's),
/// installed explicitly so another crate enabling a second backend cannot leave it unsure.
fn install_crypto() {
    let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
}
