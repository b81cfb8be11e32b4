//! An instance's link to the others through a shared [`EventLog`]: its events go out in
//! batches, written by a task of their own (a call never waits for them); the others' come
//! in through a follower that reads the log after the last id it saw.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};

use super::{Event, EventLog, LoggedEvent};
use crate::store::StoreError;

/// Events waiting to be written before new ones are dropped (a log that cannot keep up
/// must not hold calls back: events are for watching, the audit trail is the record).
const OUTBOX: usize = 8192;
/// Events written in one append, and read in one look.
const BATCH: usize = 512;
/// How long a follower waits for news before it looks anyway.
const LOOK_AT_LEAST_EVERY: Duration = Duration::from_secs(2);
/// The longest pause between tries when the log cannot be reached.
const LONGEST_BACKOFF: Duration = Duration::from_secs(5);

/// The way out (a writing task, started with the first event) and in (a following task,
/// started with the first subscriber).
pub(super) struct Relay {
    log: Arc<dyn EventLog>,
    /// This instance, as its events name it.
    origin: String,
    outbox: OnceLock<mpsc::Sender<LoggedEvent>>,
    following: AtomicBool,
}

impl Relay {
    pub(super) fn new(log: Arc<dyn EventLog>) -> Relay {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
        Relay {
            log,
            origin: crate::util::digest::hex_digest(&bytes),
            outbox: OnceLock::new(),
            following: AtomicBool::new(false),
        }
    }

    /// Queues `event` for the other instances.
    pub(super) fn offer(&self, event: &Event) {
        let Some(outbox) = self.outbox() else {
            return;
        };
        let Ok(json) = serde_json::to_string(event) else {
            return;
        };
        let logged = LoggedEvent {
            id: 0,
            origin: self.origin.clone(),
            json,
        };
        if outbox.try_send(logged).is_err() {
            tracing::warn!(
                target: "toolgate::events",
                "an event was not shared with the other instances: the event log is {} events behind",
                OUTBOX
            );
        }
    }

    /// The writing task's queue, started on first use (outside a Tokio runtime there is
    /// none yet, and the event stays here).
    fn outbox(&self) -> Option<&mpsc::Sender<LoggedEvent>> {
        if let Some(outbox) = self.outbox.get() {
            return Some(outbox);
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        Some(self.outbox.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(OUTBOX);
            runtime.spawn(write(Arc::clone(&self.log), receiver));
            sender
        }))
    }

    /// Starts following the others' events into `sender` (once; it stops with the bus).
    pub(super) fn follow(&self, sender: &broadcast::Sender<Arc<Event>>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.following.swap(true, Ordering::AcqRel) {
            return;
        }
        let log = Arc::clone(&self.log);
        runtime.spawn(follow(log, self.origin.clone(), sender.downgrade()));
    }
}

/// Writes what comes, as much as waits at once, until the registry is gone.
async fn write(log: Arc<dyn EventLog>, mut outbox: mpsc::Receiver<LoggedEvent>) {
    let mut batch = Vec::with_capacity(BATCH);
    while outbox.recv_many(&mut batch, BATCH).await > 0 {
        let events = std::mem::take(&mut batch);
        let mut pause = Duration::from_millis(100);
        // A few tries over a few seconds; after that the batch is given up (and said).
        for attempt in 1..=4 {
            match log.append(events.clone()).await {
                Ok(()) => break,
                Err(error) if attempt == 4 => {
                    tracing::warn!(target: "toolgate::events", %error, lost = events.len(),
                        "events were not shared with the other instances");
                }
                Err(_) => {
                    tokio::time::sleep(pause).await;
                    pause *= 4;
                }
            }
        }
    }
}

/// Reads the log after the last event seen, passing on the other instances' events, until
/// the bus is gone. A lost connection is retried with backoff; what was appended meanwhile
/// is read when it is back, once.
async fn follow(log: Arc<dyn EventLog>, origin: String, bus: broadcast::WeakSender<Arc<Event>>) {
    let mut trouble = Trouble::default();
    let mut last = loop {
        match log.newest().await {
            Ok(newest) => break newest,
            Err(error) => trouble.wait(&error).await,
        }
        if bus.upgrade().is_none() {
            return;
        }
    };
    let mut more_waiting = false;
    loop {
        if !more_waiting {
            let _ = log.wait_for_news(last, LOOK_AT_LEAST_EVERY).await;
        }
        let Some(sender) = bus.upgrade() else {
            return;
        };
        match log.after(last, BATCH).await {
            Ok(events) => {
                trouble.over();
                more_waiting = events.len() == BATCH;
                last = events.last().map_or(last, |event| event.id);
                pass_on(&sender, &origin, events);
            }
            Err(error) => {
                drop(sender);
                trouble.wait(&error).await;
            }
        }
    }
}

/// Sends the other instances' events to this instance's subscribers.
fn pass_on(sender: &broadcast::Sender<Arc<Event>>, origin: &str, events: Vec<LoggedEvent>) {
    for logged in events.into_iter().filter(|event| event.origin != origin) {
        match serde_json::from_str::<Event>(&logged.json) {
            Ok(event) if sender.receiver_count() > 0 => {
                let _ = sender.send(Arc::new(event));
            }
            Ok(_) => {}
            // Written by a newer toolgate, say: skipped, not fatal.
            Err(error) => tracing::debug!(target: "toolgate::events", id = logged.id, %error,
                "an event of another instance could not be read"),
        }
    }
}

/// A follower's trouble reaching the log: said once per spell, with growing pauses.
#[derive(Default)]
struct Trouble {
    pause: Option<Duration>,
}

impl Trouble {
    async fn wait(&mut self, error: &StoreError) {
        let pause = match self.pause {
            None => {
                tracing::warn!(target: "toolgate::events", %error,
                    "cannot read the other instances' events; trying again");
                Duration::from_millis(100)
            }
            Some(pause) => (pause * 2).min(LONGEST_BACKOFF),
        };
        self.pause = Some(pause);
        tokio::time::sleep(pause).await;
    }

    fn over(&mut self) {
        if self.pause.take().is_some() {
            tracing::info!(target: "toolgate::events", "reading the other instances' events again");
        }
    }
}
