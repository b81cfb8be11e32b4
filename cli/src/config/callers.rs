//! The callers of `[callers.NAME]`: their roles, and their bearer tokens (read from the
//! environment, never from the file) for serving.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::request::Parts;
use subtle::ConstantTimeEq;
use toolgate::Caller;
use toolgate::http::{AuthError, AuthFuture, Authenticate};
use toolgate::identity::Identity;

/// One configured caller.
#[derive(Debug, Clone)]
pub struct CallerEntry {
    /// The caller (its id is its name in the file).
    pub caller: Caller,
    /// Its token, when its `token_env` variable is set.
    token: Option<String>,
    /// The variable its token is read from, if the file names one.
    pub token_env: Option<String>,
}

impl CallerEntry {
    /// Whether it can sign in (its token variable is set).
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }
}

/// Every configured caller, by name; authenticates requests by their bearer token.
#[derive(Debug, Clone, Default)]
pub struct Callers {
    entries: Arc<BTreeMap<String, CallerEntry>>,
}

impl Callers {
    pub(crate) fn new(entries: BTreeMap<String, CallerEntry>) -> Self {
        Callers {
            entries: Arc::new(entries),
        }
    }

    pub(crate) fn entry(
        caller: Caller,
        token: Option<String>,
        token_env: Option<String>,
    ) -> CallerEntry {
        CallerEntry {
            caller,
            token,
            token_env,
        }
    }

    /// The caller named `name`.
    pub fn get(&self, name: &str) -> Option<&CallerEntry> {
        self.entries.get(name)
    }

    /// Every caller, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &CallerEntry)> {
        self.entries.iter()
    }

    /// The caller whose token this is. Tokens are compared in constant time (`subtle`), and
    /// every configured token is compared, so the time taken does not tell how much of a
    /// token was right.
    pub fn by_token(&self, token: &str) -> Option<Caller> {
        let mut found = None;
        for entry in self.entries.values() {
            if let Some(known) = &entry.token
                && bool::from(known.as_bytes().ct_eq(token.as_bytes()))
            {
                found = Some(entry.caller.clone());
            }
        }
        found
    }
}

impl Authenticate for Callers {
    fn authenticate(&self, parts: &Parts) -> AuthFuture {
        let answer = match bearer(parts) {
            None => Err(AuthError::no_credentials(
                "send `Authorization: Bearer <token>` with a token of a configured caller",
            )),
            Some(token) => self.by_token(token.trim()).ok_or_else(|| {
                AuthError::unauthenticated("the token is not one of a configured caller")
            }),
        };
        AuthFuture::ready(answer)
    }
}

/// Who a request to `toolgate serve` is: a configured caller by its token, else (with
/// `[auth]`) whoever the identity provider's token says.
#[derive(Clone)]
pub struct Gate {
    callers: Callers,
    identity: Option<Identity>,
}

impl Gate {
    /// The configured callers, and the identity of `[auth]` if there is one.
    pub fn new(callers: Callers, identity: Option<Identity>) -> Self {
        Gate { callers, identity }
    }
}

impl Authenticate for Gate {
    fn authenticate(&self, parts: &Parts) -> AuthFuture {
        let Some(identity) = &self.identity else {
            return self.callers.authenticate(parts);
        };
        // A configured caller's token is known here; any other is the provider's to judge.
        let known = bearer(parts).and_then(|token| self.callers.by_token(token.trim()));
        match known {
            Some(caller) => AuthFuture::ready(Ok(caller)),
            None => identity.authenticate(parts),
        }
    }
}

fn bearer(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_find_their_caller_only_when_whole() {
        let mut entries = BTreeMap::new();
        entries.insert(
            "ann".to_owned(),
            Callers::entry(Caller::new("ann", "admin"), Some("t-ann".into()), None),
        );
        entries.insert(
            "bob".to_owned(),
            Callers::entry(Caller::new("bob", "staff"), None, None),
        );
        let callers = Callers::new(entries);
        assert_eq!(callers.by_token("t-ann").unwrap().role(), "admin");
        assert!(callers.by_token("t-an").is_none());
        assert!(callers.by_token("t-ann!").is_none());
        assert!(callers.by_token("").is_none());
    }
}
