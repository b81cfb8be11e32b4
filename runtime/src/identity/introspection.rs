//! Opaque access tokens, looked up at the issuer's introspection endpoint (RFC 7662) and
//! remembered for their lifetime. Tokens are remembered by their SHA-256, never as text.
//! Lookups are rate-limited: a flood of made-up tokens is answered `503` once the limit is
//! reached instead of being passed on to the provider, and an inactive token is remembered
//! briefly too, so repeating it costs nothing.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::error::IdentityError;
use crate::util::sync::lock;

/// How long a token the issuer called inactive is remembered as such.
const INACTIVE_FOR: Duration = Duration::from_secs(30);
/// Tokens remembered at most; past it, the expired ones go, then all.
const REMEMBERED: usize = 10_000;

/// The client credentials toolgate introspects with.
#[derive(Clone)]
pub(crate) struct IntrospectionClient {
    pub(crate) id: String,
    pub(crate) secret: String,
}

/// Remembered answers and the lookup budget.
pub(crate) struct Introspection {
    pub(crate) client: IntrospectionClient,
    remembered: Mutex<HashMap<[u8; 32], Remembered>>,
    budget: DefaultDirectRateLimiter,
    /// Longest a positive answer is trusted, whatever the token's `exp`.
    max_age: Duration,
}

#[derive(Clone)]
enum Remembered {
    Active(Arc<Map<String, Value>>, Instant),
    Inactive(Instant),
}

impl Introspection {
    pub(crate) fn new(client: IntrospectionClient, per_second: u32, max_age: Duration) -> Self {
        let rate = NonZeroU32::new(per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        Introspection {
            client,
            remembered: Mutex::new(HashMap::new()),
            budget: RateLimiter::direct(Quota::per_second(rate)),
            max_age,
        }
    }

    /// The claims remembered for `token`, `Err(Inactive)` if it was found inactive lately,
    /// or `Ok(None)` if it must be looked up.
    pub(crate) fn remembered(
        &self,
        digest: &[u8; 32],
    ) -> Result<Option<Arc<Map<String, Value>>>, IdentityError> {
        let now = Instant::now();
        match lock(&self.remembered).get(digest) {
            Some(Remembered::Active(claims, until)) if *until > now => Ok(Some(Arc::clone(claims))),
            Some(Remembered::Inactive(until)) if *until > now => Err(IdentityError::Inactive),
            _ => Ok(None),
        }
    }

    /// Whether another lookup may be made now.
    pub(crate) fn may_look_up(&self) -> Result<(), IdentityError> {
        self.budget.check().map_err(|_| IdentityError::Busy)
    }

    /// Keeps the issuer's answer on `token`: its claims until its `exp` (at most the
    /// longest trust), or that it is inactive.
    pub(crate) fn remember(&self, digest: [u8; 32], claims: Option<Arc<Map<String, Value>>>) {
        let now = Instant::now();
        let entry = match claims {
            Some(claims) => {
                let left = claims
                    .get("exp")
                    .and_then(Value::as_u64)
                    .map(|exp| {
                        Duration::from_secs(exp.saturating_sub(crate::util::time::now_secs()))
                    })
                    .unwrap_or(self.max_age);
                Remembered::Active(claims, now + left.min(self.max_age))
            }
            None => Remembered::Inactive(now + INACTIVE_FOR),
        };
        let mut remembered = lock(&self.remembered);
        if remembered.len() >= REMEMBERED {
            remembered.retain(|_, kept| match kept {
                Remembered::Active(_, until) | Remembered::Inactive(until) => *until > now,
            });
            if remembered.len() >= REMEMBERED {
                remembered.clear();
            }
        }
        remembered.insert(digest, entry);
    }
}

/// The SHA-256 of a token: how it is remembered.
pub(crate) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The claims of an introspection answer, if it says the token is active.
pub(crate) fn active_claims(mut answer: Map<String, Value>) -> Option<Map<String, Value>> {
    match answer.remove("active") {
        Some(Value::Bool(true)) => Some(answer),
        _ => None,
    }
}
