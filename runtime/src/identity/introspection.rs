//! Opaque access tokens, looked up at the issuer's introspection endpoint (RFC 7662). An
//! active token's caller is remembered with the other checked tokens
//! ([`Remembered`](super::remembered::Remembered)) until its `exp`, within the longest
//! trust; an inactive one is remembered here briefly (by its SHA-256), so repeating it costs
//! nothing.
//! Lookups are rate-limited: a flood of made-up tokens is answered `503` once the limit is
//! reached instead of being passed on to the provider.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde_json::{Map, Value};

use super::error::IdentityError;
use crate::util::sync::lock;

/// How long a token the issuer called inactive is remembered as such.
const INACTIVE_FOR: Duration = Duration::from_secs(30);
/// Inactive tokens remembered at most; past it, the expired ones go, then all.
const REMEMBERED: usize = 10_000;

/// The client credentials toolgate introspects with.
#[derive(Clone)]
pub(crate) struct IntrospectionClient {
    pub(crate) id: String,
    pub(crate) secret: String,
}

/// The lookup budget, and the tokens found inactive lately.
pub(crate) struct Introspection {
    pub(crate) client: IntrospectionClient,
    inactive: Mutex<HashMap<[u8; 32], Instant>>,
    budget: DefaultDirectRateLimiter,
    /// Longest an answer is trusted, whatever the token's `exp`.
    pub(crate) max_age: Duration,
}

impl Introspection {
    pub(crate) fn new(client: IntrospectionClient, per_second: u32, max_age: Duration) -> Self {
        let rate = NonZeroU32::new(per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        Introspection {
            client,
            inactive: Mutex::new(HashMap::new()),
            budget: RateLimiter::direct(Quota::per_second(rate)),
            max_age,
        }
    }

    /// `Err(Inactive)` if the issuer called the token inactive lately; else whether
    /// another lookup may be made now.
    pub(crate) fn may_look_up(&self, digest: &[u8; 32]) -> Result<(), IdentityError> {
        if lock(&self.inactive)
            .get(digest)
            .is_some_and(|until| *until > Instant::now())
        {
            return Err(IdentityError::Inactive);
        }
        self.budget.check().map_err(|_| IdentityError::Busy)
    }

    /// Remembers that the issuer called the token inactive.
    pub(crate) fn inactive(&self, digest: [u8; 32]) {
        let now = Instant::now();
        let mut inactive = lock(&self.inactive);
        if inactive.len() >= REMEMBERED {
            inactive.retain(|_, until| *until > now);
            if inactive.len() >= REMEMBERED {
                inactive.clear();
            }
        }
        inactive.insert(digest, now + INACTIVE_FOR);
    }
}

/// The SHA-256 of a token: how a token found inactive is remembered (made-up tokens are
/// not kept as text).
pub(crate) fn digest(token: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(token.as_bytes()).into()
}

/// The claims of an introspection answer, if it says the token is active.
pub(crate) fn active_claims(mut answer: Map<String, Value>) -> Option<Map<String, Value>> {
    match answer.remove("active") {
        Some(Value::Bool(true)) => Some(answer),
        _ => None,
    }
}
