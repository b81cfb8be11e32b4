//! Where instances sharing a database leave their events for each other.

use std::sync::Arc;
use std::time::Duration;

use crate::store_error::StoreFuture;

/// An [event](super::Event) as an [`EventLog`] keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// Its place in the log (1, 2, …, in the order appended; ignored when appending).
    pub id: u64,
    /// Which instance wrote it (an instance skips its own: its subscribers had them).
    pub origin: String,
    /// The event, as JSON.
    pub json: String,
}

/// An ordered log of events that every instance of an application appends to and follows:
/// what makes an approval asked on one instance appear in the console of another. The
/// SQLite and PostgreSQL stores of [`crate::store`] are event logs; a registry given their
/// [`Stores`](crate::store::Stores) uses them.
///
/// Ids must grow in the order events become visible, so that a follower that has read up
/// to `n` never later finds an event below `n`. A log may drop old events (the stores keep
/// five minutes' worth), never the newest.
///
/// Instances that someone follows hold a lease (renewed while anyone on them subscribes);
/// an instance writes its approvals' events always, its calls' and runs' only while another
/// instance holds a lease, so a deployment nobody watches pays nothing for them.
pub trait EventLog: Send + Sync + 'static {
    /// Appends `events` in order, with the next ids.
    fn append(&self, events: Vec<LoggedEvent>) -> StoreFuture<'_, ()>;

    /// The events after id `after`, oldest first, at most `limit`.
    fn after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<LoggedEvent>>;

    /// The newest event's id (0 for an empty log).
    fn newest(&self) -> StoreFuture<'_, u64>;

    /// Returns once events after `after` may have been appended (by any instance), or
    /// after `longest` at most, whichever comes first.
    fn wait_for_news(&self, after: u64, longest: Duration) -> StoreFuture<'_, ()>;

    /// Notes that someone on instance `origin` follows the log until `until_ms`
    /// (milliseconds since the Unix epoch).
    fn lease<'a>(&'a self, origin: &'a str, until_ms: u64) -> StoreFuture<'a, ()>;

    /// Whether someone on an instance other than `origin` follows the log now (if not, that
    /// instance need not write its calls' events).
    fn followed_by_others<'a>(&'a self, origin: &'a str) -> StoreFuture<'a, bool>;
}

impl<T: EventLog + ?Sized> EventLog for Arc<T> {
    fn append(&self, events: Vec<LoggedEvent>) -> StoreFuture<'_, ()> {
        (**self).append(events)
    }

    fn after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<LoggedEvent>> {
        (**self).after(after, limit)
    }

    fn newest(&self) -> StoreFuture<'_, u64> {
        (**self).newest()
    }

    fn wait_for_news(&self, after: u64, longest: Duration) -> StoreFuture<'_, ()> {
        (**self).wait_for_news(after, longest)
    }

    fn lease<'a>(&'a self, origin: &'a str, until_ms: u64) -> StoreFuture<'a, ()> {
        (**self).lease(origin, until_ms)
    }

    fn followed_by_others<'a>(&'a self, origin: &'a str) -> StoreFuture<'a, bool> {
        (**self).followed_by_others(origin)
    }
}
