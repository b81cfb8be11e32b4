//! Where runs are kept between requests: on the server, addressed by id, never trusted from
//! a client.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use super::run::{Run, RunId};
use crate::store_error::{StoreFuture, ready};
use crate::util::sync::lock;

/// Keeps runs. `take` must be atomic: of two concurrent takes of one run (also from two
/// processes sharing a database), one gets it, so a run is resumed once. A persistent store
/// lets a run waiting for approval survive a restart: every [`Run`] is serde-serializable.
///
/// Implementations: [`MemoryRunStore`] (the default), and the SQLite and PostgreSQL stores of
/// [`crate::store`].
pub trait RunStore: Send + Sync + 'static {
    /// Keeps a run, replacing the one with its id.
    fn put(&self, run: Run) -> StoreFuture<'_, ()>;
    /// Removes and returns a run.
    fn take<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>>;
    /// A run, left in place.
    fn get<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>>;
}

impl<T: RunStore + ?Sized> RunStore for std::sync::Arc<T> {
    fn put(&self, run: Run) -> StoreFuture<'_, ()> {
        (**self).put(run)
    }
    fn take<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        (**self).take(id)
    }
    fn get<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        (**self).get(id)
    }
}

/// Runs in memory (the default). Holds at most `capacity` runs: past it, the oldest runs
/// that do not wait for approval are dropped first.
#[derive(Debug)]
pub struct MemoryRunStore {
    capacity: usize,
    runs: Mutex<(HashMap<RunId, Run>, VecDeque<RunId>)>,
}

impl MemoryRunStore {
    /// A store keeping at most `capacity` runs.
    pub fn with_capacity(capacity: usize) -> Self {
        MemoryRunStore {
            capacity: capacity.max(1),
            runs: Mutex::default(),
        }
    }
}

impl Default for MemoryRunStore {
    /// Keeps up to 10 000 runs.
    fn default() -> Self {
        MemoryRunStore::with_capacity(10_000)
    }
}

impl RunStore for MemoryRunStore {
    fn put(&self, run: Run) -> StoreFuture<'_, ()> {
        let mut guard = lock(&self.runs);
        let (runs, order) = &mut *guard;
        if !runs.contains_key(&run.id) {
            order.push_back(run.id.clone());
        }
        runs.insert(run.id.clone(), run);
        while runs.len() > self.capacity {
            let waits = |id: &RunId| runs.get(id).is_some_and(|run| run.status.waits());
            // The oldest run not waiting for a person; if all wait, the oldest.
            let position = order.iter().position(|id| !waits(id)).unwrap_or(0);
            if let Some(id) = order.remove(position) {
                runs.remove(&id);
            }
        }
        ready(Ok(()))
    }

    fn take<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        let mut guard = lock(&self.runs);
        let (runs, order) = &mut *guard;
        let run = runs.remove(id);
        if run.is_some() {
            order.retain(|kept| kept != id);
        }
        ready(Ok(run))
    }

    fn get<'a>(&'a self, id: &'a RunId) -> StoreFuture<'a, Option<Run>> {
        ready(Ok(lock(&self.runs).0.get(id).cloned()))
    }
}
