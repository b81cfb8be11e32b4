//! Sessions of people who signed in through the identity provider (the console's sign-in):
//! a random secret in an HttpOnly cookie, and, in the [`SessionStore`] under the secret's
//! digest, the issuer and claims of the access token the sign-in was given, until that
//! token expires.
//!
//! A session keeps claims, not a role: each request maps them with the rules of the day,
//! so the caller is decided as it presents now. The token itself is not kept anywhere.
//!
//! Sessions are opened and closed by the console's sign-in; without the `console` feature
//! only reading them is used.
#![cfg_attr(not(feature = "console"), allow(dead_code))]

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::Identity;
use super::error::IdentityError;
use crate::caller::Caller;
use crate::util::digest::hex_digest;
use crate::util::time::now_millis;

/// The cookie holding a session's secret.
pub(crate) const SESSION_COOKIE: &str = "toolgate_session";

/// What a session keeps.
#[derive(Serialize, Deserialize)]
struct Kept {
    issuer: String,
    claims: Map<String, Value>,
}

/// A new secret: 32 random bytes, base64url.
pub(crate) fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the system's random source answers");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Where a secret's record is kept: its kind and the SHA-256 of the secret.
pub(crate) fn store_key(kind: &str, secret: &str) -> String {
    format!("{kind}:{}", hex_digest(&Sha256::digest(secret.as_bytes())))
}

impl Identity {
    /// Opens a session for the caller a sign-in's token identified, until `expires_ms`;
    /// its secret, for the cookie.
    pub(crate) async fn open_session(
        &self,
        caller: &Caller,
        expires_ms: u64,
    ) -> Result<String, IdentityError> {
        let store = self.sessions().ok_or(IdentityError::NoSessions)?;
        let kept = Kept {
            issuer: caller.issuer().unwrap_or_default().to_owned(),
            claims: caller.claims().cloned().unwrap_or_default(),
        };
        let value = serde_json::to_string(&kept).unwrap_or_default();
        let secret = new_secret();
        store
            .put(store_key("session", &secret), value, expires_ms)
            .await
            .map_err(|error| IdentityError::SessionsUnavailable(error.to_string()))?;
        Ok(secret)
    }

    /// The caller of a session's secret, as today's rules map its claims.
    pub(crate) async fn session_caller(&self, secret: &str) -> Result<Caller, IdentityError> {
        let store = self.sessions().ok_or(IdentityError::NoSessions)?;
        let kept = store
            .get(&store_key("session", secret))
            .await
            .map_err(|error| IdentityError::SessionsUnavailable(error.to_string()))?
            .ok_or(IdentityError::SessionEnded)?;
        let kept: Kept = serde_json::from_str(&kept).map_err(|_| IdentityError::SessionEnded)?;
        self.caller_of_kept(&kept.issuer, kept.claims)
    }

    /// Ends a session; whether there was one.
    pub(crate) async fn close_session(&self, secret: &str) -> Result<bool, IdentityError> {
        let store = self.sessions().ok_or(IdentityError::NoSessions)?;
        store
            .take(&store_key("session", secret))
            .await
            .map(|taken| taken.is_some())
            .map_err(|error| IdentityError::SessionsUnavailable(error.to_string()))
    }
}

/// Milliseconds from now until a token's `exp`, within `longest`.
pub(crate) fn session_end(claims: Option<&Map<String, Value>>, longest_ms: u64) -> u64 {
    let now = now_millis();
    let expires = claims
        .and_then(|claims| claims.get("exp"))
        .and_then(Value::as_u64)
        .map_or(u64::MAX, |exp| exp.saturating_mul(1000));
    expires.min(now.saturating_add(longest_ms))
}
