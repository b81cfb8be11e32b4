//! What toolgate knows of one issuer: its metadata and its keys, fetched when first needed
//! and again when they are old or a token names a key not among them.
//!
//! Fetches are few whatever the tokens say. One fetch runs at a time (requests that need it
//! wait for it and share its answer), and no fetch starts sooner than the refetch interval
//! after the last one, so a flood of made-up key ids costs the provider at most one fetch an
//! interval. When a fetch fails, the keys already held keep working; only an issuer never
//! reached answers "unavailable".

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use jsonwebtoken::Algorithm;
use serde_json::Value;

use super::discovery::{Metadata, discover};
use super::error::IdentityError;
use super::fetch::Fetcher;
use super::keys::KeySet;

/// How often an issuer's keys are fetched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refresh {
    /// Keys older than this are fetched again (so a key the issuer removed stops working).
    pub(crate) max_age: Duration,
    /// No fetch sooner than this after the last one, whatever tokens arrive.
    pub(crate) min_interval: Duration,
}

/// One issuer's published metadata and keys.
pub(crate) struct Provider {
    pub(crate) issuer: String,
    /// Where its keys are, when the application said so (no discovery needed for them).
    jwks_uri: Option<String>,
    metadata: ArcSwapOption<Metadata>,
    keys: ArcSwapOption<KeySet>,
    /// The last fetches of the metadata and of the keys. Held while fetching, so one fetch
    /// runs at a time.
    last: tokio::sync::Mutex<Attempts>,
}

#[derive(Default)]
struct Attempts {
    metadata: Attempt,
    keys: Attempt,
}

/// When a fetch started, and why it failed if it did.
#[derive(Default)]
struct Attempt {
    started: Option<Instant>,
    failure: Option<String>,
}

impl Provider {
    pub(crate) fn new(issuer: String, jwks_uri: Option<String>) -> Provider {
        Provider {
            issuer,
            jwks_uri,
            metadata: ArcSwapOption::empty(),
            keys: ArcSwapOption::empty(),
            last: tokio::sync::Mutex::new(Attempts::default()),
        }
    }

    /// The keys to check a token of `kid` and `algorithm` with: those held, fetched anew
    /// when they are old or lack the token's key (within the refetch interval).
    pub(crate) async fn keys_for(
        &self,
        kid: Option<&str>,
        algorithm: Algorithm,
        fetcher: &Fetcher,
        refresh: Refresh,
    ) -> Result<Arc<KeySet>, IdentityError> {
        let held = self.keys.load_full();
        if let Some(set) = &held
            && set.fetched.elapsed() < refresh.max_age
            && set.candidates(kid, algorithm).next().is_some()
        {
            return Ok(Arc::clone(set));
        }
        match self.fetch_keys(held.as_ref(), fetcher, refresh).await {
            Some(set) => Ok(set),
            None => Err(self.unavailable_because(&self.last.lock().await.keys)),
        }
    }

    /// Whether `keys` are the ones held now, and young enough to check with.
    pub(crate) fn still_holds(&self, keys: &Arc<KeySet>, refresh: Refresh) -> bool {
        keys.fetched.elapsed() < refresh.max_age
            && self
                .keys
                .load()
                .as_ref()
                .is_some_and(|held| Arc::ptr_eq(held, keys))
    }

    /// The issuer's metadata, discovered once.
    pub(crate) async fn metadata(
        &self,
        fetcher: &Fetcher,
        refresh: Refresh,
    ) -> Result<Arc<Metadata>, IdentityError> {
        if let Some(metadata) = self.metadata.load_full() {
            return Ok(metadata);
        }
        let mut attempts = self.last.lock().await;
        if let Some(metadata) = self.metadata.load_full() {
            return Ok(metadata);
        }
        let last = &mut attempts.metadata;
        if !due(last, refresh.min_interval) {
            return Err(self.unavailable_because(last));
        }
        last.started = Some(Instant::now());
        match discover(fetcher, &self.issuer).await {
            Ok(metadata) => {
                last.failure = None;
                let metadata = Arc::new(metadata);
                self.metadata.store(Some(Arc::clone(&metadata)));
                Ok(metadata)
            }
            Err(why) => {
                tracing::warn!(issuer = %self.issuer, "identity provider: {why}");
                last.failure = Some(why);
                Err(self.unavailable_because(last))
            }
        }
    }

    /// The keys after one fetch, or those held when no fetch is due or it fails; `None`
    /// only when none are held at all.
    async fn fetch_keys(
        &self,
        seen: Option<&Arc<KeySet>>,
        fetcher: &Fetcher,
        refresh: Refresh,
    ) -> Option<Arc<KeySet>> {
        let mut attempts = self.last.lock().await;
        let last = &mut attempts.keys;
        let held = self.keys.load_full();
        let fetched_meanwhile = match (&held, seen) {
            (Some(held), Some(seen)) => !Arc::ptr_eq(held, seen),
            (held, seen) => held.is_some() != seen.is_some(),
        };
        if fetched_meanwhile || !due(last, refresh.min_interval) {
            return held;
        }
        last.started = Some(Instant::now());
        match self.fetch_set(fetcher).await {
            Ok(set) => {
                last.failure = None;
                let set = Arc::new(set);
                self.keys.store(Some(Arc::clone(&set)));
                Some(set)
            }
            Err(why) => {
                tracing::warn!(issuer = %self.issuer, "identity provider's keys: {why}");
                last.failure = Some(why);
                held
            }
        }
    }

    /// Discovers the keys' address if needed (the lock is held by the caller), then fetches
    /// them.
    async fn fetch_set(&self, fetcher: &Fetcher) -> Result<KeySet, String> {
        let jwks_uri = match &self.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let metadata = match self.metadata.load_full() {
                    Some(metadata) => metadata,
                    None => {
                        let metadata = Arc::new(discover(fetcher, &self.issuer).await?);
                        self.metadata.store(Some(Arc::clone(&metadata)));
                        metadata
                    }
                };
                metadata
                    .jwks_uri
                    .clone()
                    .ok_or("its metadata names no `jwks_uri`")?
            }
        };
        let published: Value = fetcher.get(&jwks_uri).await?;
        KeySet::read(published)
    }

    fn unavailable_because(&self, last: &Attempt) -> IdentityError {
        IdentityError::ProviderUnavailable {
            issuer: self.issuer.clone(),
            why: last
                .failure
                .clone()
                .unwrap_or_else(|| "it has not been reached yet".to_owned()),
        }
    }
}

/// Whether a fetch may start now.
fn due(last: &Attempt, min_interval: Duration) -> bool {
    last.started
        .is_none_or(|started| started.elapsed() >= min_interval)
}
