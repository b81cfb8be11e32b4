//! `[auth]`: callers identified by an identity provider's access tokens. Its mistakes are
//! found when the file is checked (every command), its secrets read when serving.

use toolgate::Roles;
use toolgate::identity::{Identity, Issuer};

use super::Config;
use super::keys::{AuthKey, IntrospectionKey};
use toolgate_tools::Problem;

/// The algorithms `[auth] algorithms` may name.
const ALGORITHMS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

impl Config {
    /// What can be wrong with `[auth]` without reading secrets: its issuers, audience and
    /// algorithms (its roles are checked with every other role of the file).
    pub(super) fn check_auth(&self) -> Result<(), Problem> {
        let Some(auth) = &self.file.auth else {
            return Ok(());
        };
        let at = auth.span();
        let auth = auth.get_ref();
        match (&auth.issuer, auth.issuers.is_empty()) {
            (None, true) => {
                return Err(self.problem_at(
                    at,
                    "[auth] needs the identity provider: `issuer = \"https://...\"` (its tokens' `iss`)",
                ));
            }
            (Some(issuer), false) => {
                return Err(self.problem_at(
                    issuer.span(),
                    "write `issuer` for one identity provider or `[[auth.issuers]]` for several, not both",
                ));
            }
            _ => {}
        }
        for url in self.issuer_urls(auth) {
            if !url.get_ref().starts_with("https://") && !url.get_ref().starts_with("http://") {
                return Err(self.problem_at(
                    url.span(),
                    format!("`{}` is not an issuer URL (https://...)", url.get_ref()),
                ));
            }
        }
        if !auth.audience.get_ref().contains("://") {
            return Err(self.problem_at(
                auth.audience.span(),
                "`audience` is this server's URL as clients use it (e.g. \"https://tools.example.com/mcp\"); tokens must be issued for it",
            ));
        }
        for algorithm in &auth.algorithms {
            if !ALGORITHMS.contains(&algorithm.get_ref().as_str()) {
                return Err(self.problem_at(
                    algorithm.span(),
                    format!(
                        "`{}` is not an accepted algorithm; use {} (symmetric HS* and `none` never are)",
                        algorithm.get_ref(),
                        ALGORITHMS.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn issuer_urls<'a>(&self, auth: &'a AuthKey) -> Vec<&'a toml::Spanned<String>> {
        let mut urls: Vec<_> = auth.issuer.iter().collect();
        urls.extend(auth.issuers.iter().map(|issuer| &issuer.url));
        urls
    }

    /// The identity `[auth]` describes, for serving (its secrets read from the environment).
    pub fn identity(&self, roles: &Roles) -> Result<Option<Identity>, Problem> {
        let Some(auth) = &self.file.auth else {
            return Ok(None);
        };
        let at = auth.span();
        let auth = auth.get_ref();
        let mut builder = Identity::builder().audience(auth.audience.get_ref());
        if let Some(url) = &auth.issuer {
            let mut issuer = Issuer::new(url.get_ref());
            if let Some(introspection) = &auth.introspection {
                let (id, secret) = self.introspection(introspection)?;
                issuer = issuer.introspection(id, secret);
            }
            builder = builder.issuer(issuer);
        }
        for key in &auth.issuers {
            let mut issuer = Issuer::new(key.url.get_ref());
            if let Some(name) = &key.name {
                issuer = issuer.named(name);
            }
            if let Some(introspection) = &key.introspection {
                let (id, secret) = self.introspection(introspection)?;
                issuer = issuer.introspection(id, secret);
            }
            builder = builder.issuer(issuer);
        }
        builder = self.role_rules(auth, builder);
        builder
            .build(roles)
            .map(Some)
            .map_err(|error| self.problem_at(at, error.problems.join("; ")))
    }

    fn role_rules(
        &self,
        auth: &AuthKey,
        mut builder: toolgate::identity::IdentityBuilder,
    ) -> toolgate::identity::IdentityBuilder {
        if !auth.algorithms.is_empty() {
            builder = builder.algorithms(auth.algorithms.iter().map(|alg| alg.get_ref().clone()));
        }
        if let Some(leeway) = auth.leeway {
            builder = builder.leeway(leeway);
        }
        if let Some(claim) = &auth.id_claim {
            builder = builder.id_claim(claim);
        }
        if let Some(role) = &auth.default_role {
            builder = builder.default_role(role.get_ref());
        }
        for rule in &auth.roles {
            builder = builder.role_from_claim(&rule.claim, &rule.value, rule.role.get_ref());
        }
        for (scope, role) in &auth.scopes {
            builder = builder.scope_caps_role(scope, role.get_ref());
        }
        for scope in &auth.required_scopes {
            builder = builder.require_scope(scope);
        }
        builder
    }

    fn introspection(&self, key: &IntrospectionKey) -> Result<(String, String), Problem> {
        let variable = key.secret_env.get_ref();
        match std::env::var(variable) {
            Ok(secret) if !secret.is_empty() => Ok((key.client_id.clone(), secret)),
            _ => Err(self.problem_at(
                key.secret_env.span(),
                format!("the environment variable `{variable}` (the introspection client's secret) is not set"),
            )),
        }
    }

    /// Every role `[auth]` names, where it names them.
    pub(super) fn auth_roles(&self) -> Vec<&toml::Spanned<String>> {
        let Some(auth) = &self.file.auth else {
            return Vec::new();
        };
        let auth = auth.get_ref();
        let mut named: Vec<_> = auth.roles.iter().map(|rule| &rule.role).collect();
        named.extend(auth.default_role.iter());
        named.extend(auth.scopes.values());
        named
    }
}
