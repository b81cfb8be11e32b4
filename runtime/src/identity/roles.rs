//! From a token's claims to a role of the registry's hierarchy.
//!
//! - A rule gives a role when a claim holds a value: the claim is a string equal to it, an
//!   array holding it, or `scope` (space-separated) listing it. A claim is named as it is
//!   (`groups`, `https://example.com/roles`) or by a JSON Pointer into nested claims
//!   (`/realm_access/roles`).
//! - When several rules match, the **highest** of their roles is the caller's; when none
//!   does, the default role if one is set, else the token is refused (`403`).
//! - Scopes may then cap the role: with caps set, the role is at most the highest cap among
//!   the token's scopes, and a token with none of those scopes is refused
//!   (`403 insufficient_scope`). Required scopes must all be present.

use serde_json::{Map, Value};
use smol_str::SmolStr;

use super::error::IdentityError;

/// Where a claim is: a name at the top, or a JSON Pointer into nested claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClaimPath(String);

impl ClaimPath {
    pub(crate) fn new(path: impl Into<String>) -> ClaimPath {
        ClaimPath(path.into())
    }

    pub(crate) fn find<'a>(&self, claims: &'a Map<String, Value>) -> Option<&'a Value> {
        match self.0.strip_prefix('/') {
            Some(_) => {
                let (first, rest) = split_pointer(&self.0);
                claims.get(&first)?.pointer(rest)
            }
            None => claims.get(&self.0),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// The first token of a JSON Pointer (unescaped) and the pointer to the rest.
fn split_pointer(pointer: &str) -> (String, &str) {
    let body = &pointer[1..];
    let end = body.find('/').unwrap_or(body.len());
    let first = body[..end].replace("~1", "/").replace("~0", "~");
    (first, &body[end..])
}

/// Whether a claim's value holds `wanted` (see the module's rule).
fn holds(claim: &str, value: &Value, wanted: &str) -> bool {
    match value {
        Value::String(text) if is_scope_list(claim) => text.split(' ').any(|item| item == wanted),
        Value::String(text) => text == wanted,
        Value::Array(items) => items.iter().any(|item| item.as_str() == Some(wanted)),
        Value::Bool(flag) => wanted == if *flag { "true" } else { "false" },
        _ => false,
    }
}

fn is_scope_list(claim: &str) -> bool {
    claim == "scope" || claim == "scp"
}

/// One rule: `claim` holding `value` gives the role of rank `rank`.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub(crate) claim: ClaimPath,
    pub(crate) value: String,
    pub(crate) rank: usize,
}

/// The rules, checked against the registry's roles.
#[derive(Debug, Clone, Default)]
pub(crate) struct RoleMap {
    /// Role names, lowest first.
    pub(crate) names: Vec<SmolStr>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) default: Option<usize>,
    /// A scope and the highest role it allows.
    pub(crate) caps: Vec<(String, usize)>,
    pub(crate) required_scopes: Vec<String>,
}

impl RoleMap {
    /// The role of a token holding `claims`.
    pub(crate) fn role_for(&self, claims: &Map<String, Value>) -> Result<SmolStr, IdentityError> {
        let scopes = Scopes::of(claims);
        if let Some(missing) = self.required_scopes.iter().find(|s| !scopes.has(s)) {
            return Err(IdentityError::InsufficientScope {
                scope: missing.clone(),
            });
        }
        let cap = self.cap(&scopes)?;
        let mapped = self
            .rules
            .iter()
            .filter(|rule| {
                rule.claim
                    .find(claims)
                    .is_some_and(|value| holds(rule.claim.as_str(), value, &rule.value))
            })
            .map(|rule| rule.rank)
            .max()
            .or(self.default)
            .ok_or_else(|| IdentityError::NoRole(self.why_no_role()))?;
        Ok(self.names[cap.map_or(mapped, |cap| cap.min(mapped))].clone())
    }

    /// The highest rank the token's scopes allow (`None` without caps configured); a token
    /// with none of the capping scopes is refused, naming them.
    fn cap(&self, scopes: &Scopes<'_>) -> Result<Option<usize>, IdentityError> {
        if self.caps.is_empty() {
            return Ok(None);
        }
        let allowed = self
            .caps
            .iter()
            .filter(|(scope, _)| scopes.has(scope))
            .map(|(_, rank)| *rank)
            .max();
        match allowed {
            Some(rank) => Ok(Some(rank)),
            None => Err(IdentityError::InsufficientScope {
                scope: self
                    .caps
                    .iter()
                    .map(|(scope, _)| scope.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            }),
        }
    }

    fn why_no_role(&self) -> String {
        let rules: Vec<String> = self
            .rules
            .iter()
            .map(|rule| format!("`{}` holding `{}`", rule.claim.as_str(), rule.value))
            .collect();
        match rules.is_empty() {
            true => "no claim rules are configured and there is no default role".to_owned(),
            false => format!(
                "it has none of {} and there is no default role",
                rules.join(", ")
            ),
        }
    }

    /// Every scope the rules and caps name, for the resource's metadata.
    pub(crate) fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self.required_scopes.clone();
        for (scope, _) in &self.caps {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        scopes
    }
}

/// A token's scopes: `scope` (space-separated) or `scp` (a list, or space-separated).
struct Scopes<'a>(Vec<&'a str>);

impl<'a> Scopes<'a> {
    fn of(claims: &'a Map<String, Value>) -> Scopes<'a> {
        let mut found = Vec::new();
        for name in ["scope", "scp"] {
            match claims.get(name) {
                Some(Value::String(text)) => {
                    found.extend(text.split(' ').filter(|s| !s.is_empty()))
                }
                Some(Value::Array(items)) => found.extend(items.iter().filter_map(Value::as_str)),
                _ => {}
            }
        }
        Scopes(found)
    }

    fn has(&self, scope: &str) -> bool {
        self.0.contains(&scope)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::{ClaimPath, RoleMap, Rule};
    use crate::identity::IdentityError;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn map() -> RoleMap {
        let rule = |claim: &str, value: &str, rank| Rule {
            claim: ClaimPath::new(claim),
            value: value.into(),
            rank,
        };
        RoleMap {
            names: ["public", "customer", "staff", "admin"]
                .map(Into::into)
                .to_vec(),
            rules: vec![
                rule("groups", "owners", 1),
                rule("groups", "vets", 2),
                rule("/realm_access/roles", "admin", 3),
                rule("https://example.com/roles", "vets", 2),
            ],
            ..RoleMap::default()
        }
    }

    #[test]
    fn the_highest_matching_role_wins() {
        let roles = map();
        let both = claims(json!({"groups": ["owners", "vets"]}));
        assert_eq!(roles.role_for(&both).unwrap(), "staff");
        let nested = claims(json!({"groups": "owners", "realm_access": {"roles": ["admin"]}}));
        assert_eq!(roles.role_for(&nested).unwrap(), "admin");
        let namespaced = claims(json!({"https://example.com/roles": ["vets"]}));
        assert_eq!(roles.role_for(&namespaced).unwrap(), "staff");
    }

    #[test]
    fn a_token_matching_no_rule_gets_the_default_or_is_refused() {
        let mut roles = map();
        let stranger = claims(json!({"groups": ["visitors"], "sub": "x"}));
        let refused = roles.role_for(&stranger).unwrap_err();
        assert!(matches!(refused, IdentityError::NoRole(_)));
        assert_eq!(refused.status(), 403);
        assert!(
            refused.to_string().contains("`groups` holding `vets`"),
            "{refused}"
        );
        // The token's own values are never quoted.
        assert!(!refused.to_string().contains("visitors"));
        roles.default = Some(0);
        assert_eq!(roles.role_for(&stranger).unwrap(), "public");
    }

    #[test]
    fn a_string_claim_matches_whole_and_only_scope_is_split() {
        let roles = map();
        let joined = claims(json!({"groups": "owners vets"}));
        assert!(roles.role_for(&joined).is_err());
        let mut scoped = map();
        scoped.rules = vec![Rule {
            claim: ClaimPath::new("scope"),
            value: "tools:admin".into(),
            rank: 3,
        }];
        let token = claims(json!({"scope": "openid tools:admin"}));
        assert_eq!(scoped.role_for(&token).unwrap(), "admin");
    }

    #[test]
    fn scopes_cap_the_role_and_are_required() {
        let mut roles = map();
        roles.caps = vec![("tools:read".into(), 1), ("tools:admin".into(), 3)];
        let vet_reading = claims(json!({"groups": ["vets"], "scope": "tools:read"}));
        assert_eq!(roles.role_for(&vet_reading).unwrap(), "customer");
        let vet_admin = claims(json!({"groups": ["vets"], "scp": ["tools:admin"]}));
        assert_eq!(roles.role_for(&vet_admin).unwrap(), "staff");
        let unscoped = claims(json!({"groups": ["vets"]}));
        let refused = roles.role_for(&unscoped).unwrap_err();
        assert_eq!(
            refused,
            IdentityError::InsufficientScope {
                scope: "tools:read tools:admin".into()
            }
        );
        roles.required_scopes = vec!["mcp".into()];
        let refused = roles.role_for(&vet_admin).unwrap_err();
        assert_eq!(refused.bearer_error(), Some("insufficient_scope"));
    }
}
