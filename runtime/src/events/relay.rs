//! An instance's link to the others through a shared [`EventLog`]: its events go out in
//! batches, written by a task of their own (a call never waits for them), its calls' only
//! while another instance is followed; the others' come in through a follower that reads
//! the log after the last id it saw, and holds a lease while anyone here subscribes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, mpsc};

use super::{Event, EventLog, LoggedEvent};
use crate::store_error::StoreError;

/// Events waiting to be written before new ones are dropped (a log that cannot keep up
/// must not hold calls back: events are for watching, the audit trail is the record).
const OUTBOX: usize = 8192;
/// Events written in one append, and read in one look.
const BATCH: usize = 512;
/// How long the writer waits for more events before it writes what it has.
const LINGER: Duration = Duration::from_millis(10);
/// How long a follower waits for news before it looks anyway.
const LOOK_AT_LEAST_EVERY: Duration = Duration::from_secs(2);
/// The longest pause between tries when the log cannot be reached.
const LONGEST_BACKOFF: Duration = Duration::from_secs(5);
/// How often the writer asks whether another instance is followed (so a console opened
/// there hears of this instance's calls within about this long).
const LOOK_FOR_FOLLOWERS_EVERY: Duration = Duration::from_secs(1);
/// How long a follower's lease lasts, and how often it is renewed: long enough that a
/// follower whose connection drops for a while still finds what happened meanwhile.
const LEASE: Duration = Duration::from_secs(120);
const RENEW_EVERY: Duration = Duration::from_secs(20);

/// The way out (a writing task, started with the first event) and in (a following task,
/// started with the first subscriber).
pub(super) struct Relay {
    log: Arc<dyn EventLog>,
    /// This instance, as its events name it.
    origin: String,
    outbox: OnceLock<mpsc::Sender<LoggedEvent>>,
    /// Whether another instance follows the log (until the writer knows: yes).
    followed: Arc<AtomicBool>,
    following: AtomicBool,
    /// Events dropped because the writer was behind (said now and then, not each time).
    dropped: AtomicU64,
}

impl Relay {
    pub(super) fn new(log: Arc<dyn EventLog>) -> Relay {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
        Relay {
            log,
            origin: crate::util::digest::hex_digest(&bytes),
            outbox: OnceLock::new(),
            followed: Arc::new(AtomicBool::new(true)),
            following: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        }
    }

    /// Whether another instance follows the log, so this instance's calls' events are
    /// wanted there.
    #[inline]
    pub(super) fn followed(&self) -> bool {
        self.outbox().is_some() && self.followed.load(Ordering::Relaxed)
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
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped % 1000 == 1 {
                tracing::warn!(target: "toolgate::events", dropped,
                    "events were not shared with the other instances: the event log is {OUTBOX} events behind");
            }
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
            let writer = Writer {
                log: Arc::clone(&self.log),
                origin: self.origin.clone(),
                followed: Arc::clone(&self.followed),
            };
            runtime.spawn(writer.write(receiver));
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

/// The writing task's part.
struct Writer {
    log: Arc<dyn EventLog>,
    origin: String,
    followed: Arc<AtomicBool>,
}

impl Writer {
    /// Writes what comes, as much as waits at once, and looks for followers now and then,
    /// until the registry is gone.
    async fn write(self, mut outbox: mpsc::Receiver<LoggedEvent>) {
        let mut look = tokio::time::interval(LOOK_FOR_FOLLOWERS_EVERY);
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            tokio::select! {
                received = outbox.recv_many(&mut batch, BATCH) => {
                    if received == 0 {
                        return;
                    }
                    // What comes in the next moment goes along: fewer, larger writes.
                    tokio::time::sleep(LINGER).await;
                    while batch.len() < BATCH && let Ok(event) = outbox.try_recv() {
                        batch.push(event);
                    }
                    self.append(std::mem::take(&mut batch)).await;
                }
                _ = look.tick() => {
                    if let Ok(followed) = self.log.followed_by_others(&self.origin).await {
                        self.followed.store(followed, Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// A few tries over a few seconds; after that the batch is given up (and said).
    async fn append(&self, events: Vec<LoggedEvent>) {
        let mut pause = Duration::from_millis(100);
        for attempt in 1..=4 {
            match self.log.append(events.clone()).await {
                Ok(()) => return,
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
    let mut leased: Option<Instant> = None;
    let mut last = loop {
        match log.newest().await {
            Ok(newest) => break newest,
            Err(error) => trouble.wait(&error).await,
        }
        if bus.upgrade().is_none() {
            return;
        }
    };
    // The first look is at once (and takes the lease).
    let mut more_waiting = true;
    loop {
        if !more_waiting {
            let _ = log.wait_for_news(last, LOOK_AT_LEAST_EVERY).await;
        }
        let Some(sender) = bus.upgrade() else {
            return;
        };
        if sender.receiver_count() > 0 && leased.is_none_or(|at| at.elapsed() >= RENEW_EVERY) {
            let until = crate::util::time::now_millis() + LEASE.as_millis() as u64;
            if log.lease(&origin, until).await.is_ok() {
                leased = Some(Instant::now());
            }
        }
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
