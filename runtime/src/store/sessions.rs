//! People's sign-in sessions (and sign-ins under way), kept server-side so that every
//! instance behind a load balancer knows them.
//!
//! A store keeps short texts under keys until they expire. The keys it is given are
//! digests of the secrets a browser holds (its cookie), never the secrets themselves, so
//! reading the store does not let anyone sign in.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::store_error::{StoreFuture, ready};
use crate::util::sync::lock;
use crate::util::time::now_millis;

/// Where sessions are kept: in memory ([`MemorySessionStore`], the default: one process
/// only), or in a database (the SQLite and PostgreSQL stores of [`crate::store`]), shared
/// by every instance.
pub trait SessionStore: Send + Sync + 'static {
    /// Keeps `value` under `key` until `expires_ms` (milliseconds since the Unix epoch),
    /// replacing what was there.
    fn put(&self, key: String, value: String, expires_ms: u64) -> StoreFuture<'_, ()>;
    /// What is kept under `key`, unless it has expired.
    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>>;
    /// Removes what is kept under `key` and returns it unless it had expired: once only,
    /// however many ask at the same time.
    fn take<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>>;
}

impl<T: SessionStore + ?Sized> SessionStore for std::sync::Arc<T> {
    fn put(&self, key: String, value: String, expires_ms: u64) -> StoreFuture<'_, ()> {
        (**self).put(key, value, expires_ms)
    }
    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        (**self).get(key)
    }
    fn take<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        (**self).take(key)
    }
}

/// Sessions in this process's memory.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    kept: Mutex<HashMap<String, (String, u64)>>,
}

impl SessionStore for MemorySessionStore {
    fn put(&self, key: String, value: String, expires_ms: u64) -> StoreFuture<'_, ()> {
        let now = now_millis();
        let mut kept = lock(&self.kept);
        kept.retain(|_, (_, expires)| *expires > now);
        kept.insert(key, (value, expires_ms));
        ready(Ok(()))
    }

    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        let found = lock(&self.kept)
            .get(key)
            .filter(|(_, expires)| *expires > now_millis())
            .map(|(value, _)| value.clone());
        ready(Ok(found))
    }

    fn take<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<String>> {
        let found = lock(&self.kept)
            .remove(key)
            .filter(|(_, expires)| *expires > now_millis())
            .map(|(value, _)| value);
        ready(Ok(found))
    }
}

#[cfg(test)]
mod tests {
    use super::{MemorySessionStore, SessionStore};
    use crate::util::time::now_millis;

    #[tokio::test]
    async fn kept_until_expired_and_taken_once() {
        let store = MemorySessionStore::default();
        let later = now_millis() + 60_000;
        store.put("a".into(), "1".into(), later).await.unwrap();
        store
            .put("old".into(), "2".into(), now_millis() - 1)
            .await
            .unwrap();
        assert_eq!(store.get("a").await.unwrap().as_deref(), Some("1"));
        assert_eq!(store.get("old").await.unwrap(), None);
        assert_eq!(store.take("a").await.unwrap().as_deref(), Some("1"));
        assert_eq!(store.take("a").await.unwrap(), None);
        assert_eq!(store.get("a").await.unwrap(), None);
    }
}
