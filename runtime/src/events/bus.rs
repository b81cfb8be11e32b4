//! The registry's event channel: subscribers in this process, and (with a shared
//! [`EventLog`](super::EventLog)) the other instances.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::broadcast;

use super::relay::Relay;
use super::{Event, EventKind, EventLog};

/// How many events a subscriber may fall behind before it misses some.
const CAPACITY: usize = 1024;

/// Sees the approvals' events on the calling task, as they are published (e.g. to note them
/// on the call's span): keep it quick.
pub(crate) type Watcher = Box<dyn Fn(&Event) + Send + Sync>;

/// The registry's event channel.
pub(crate) struct EventBus {
    sender: broadcast::Sender<Arc<Event>>,
    /// Whether anyone ever subscribed: until then, a call does not even look (counting the
    /// receivers takes a lock).
    subscribed: AtomicBool,
    /// Sees the approvals' events as they happen, on the calling task.
    watcher: Option<Watcher>,
    /// The other instances' way in and out, when the stores are shared.
    relay: Option<Relay>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            sender: broadcast::Sender::new(CAPACITY),
            subscribed: AtomicBool::new(false),
            watcher: None,
            relay: None,
        }
    }
}

impl EventBus {
    /// The channel, with `watcher` (the telemetry's) seeing the approvals' events, and the
    /// events people act on shared through `log` with the other instances.
    pub(crate) fn new(watcher: Option<Watcher>, log: Option<Arc<dyn EventLog>>) -> Self {
        EventBus {
            watcher,
            relay: log.map(Relay::new),
            ..EventBus::default()
        }
    }

    /// Sends an event, made only when someone listens (calls pay nothing otherwise: the
    /// check is inlined where a call passes, the sending is not).
    #[inline]
    pub(crate) fn publish(&self, make: impl FnOnce() -> (String, Option<String>, EventKind)) {
        if self.listened() || self.relay.as_ref().is_some_and(Relay::followed) {
            self.send(make(), false);
        }
    }

    /// Sends an approval's event (a person asked, or answering), which the watcher sees too,
    /// and the other instances always.
    pub(crate) fn publish_approval(
        &self,
        make: impl FnOnce() -> (String, Option<String>, EventKind),
    ) {
        if self.watcher.is_some() || self.listened() || self.relay.is_some() {
            self.send(make(), true);
        }
    }

    #[inline]
    fn listened(&self) -> bool {
        self.subscribed.load(Ordering::Acquire) && self.sender.receiver_count() > 0
    }

    #[inline(never)]
    fn send(&self, (caller, run, kind): (String, Option<String>, EventKind), watched: bool) {
        let event = Event {
            time_ms: crate::util::time::now_millis(),
            caller,
            run,
            kind,
        };
        if let Some(watcher) = self.watcher.as_ref().filter(|_| watched) {
            watcher(&event);
        }
        if let Some(relay) = self
            .relay
            .as_ref()
            .filter(|_| event.kind.crosses_instances())
        {
            relay.offer(&event);
        }
        // No receiver left since the check: nothing to do.
        if self.sender.receiver_count() > 0 {
            let _ = self.sender.send(Arc::new(event));
        }
    }

    /// A receiver of every event from now on: this instance's, and the other instances'
    /// (which this instance starts following now, if it shares a log).
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.subscribed.store(true, Ordering::Release);
        let receiver = self.sender.subscribe();
        if let Some(relay) = &self.relay {
            relay.follow(&self.sender);
        }
        receiver
    }
}
