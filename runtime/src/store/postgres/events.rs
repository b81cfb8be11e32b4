//! The event log in PostgreSQL: appends are serialized by an advisory lock, so ids grow in
//! the order events become visible; each append notifies `toolgate_events` with the newest
//! id (never the events themselves); each instance keeps one connection listening, and
//! reconnects when it drops (its followers then read what they missed from the table).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_postgres::{AsyncMessage, NoTls};

use super::PostgresStore;
use crate::events::{EventLog, LoggedEvent};
use crate::store::schema::EVENTS_KEPT_MS;
use crate::store::{StoreError, StoreFuture};

/// Serializes appends between instances (any constant; "tgevents" in ASCII).
const APPEND_LOCK: i64 = 0x7467_6576_656e_7473;
/// The channel notified on each append.
const CHANNEL: &str = "toolgate_events";
/// How the listening connection names itself (seen in `pg_stat_activity`).
const LISTENER_NAME: &str = "toolgate events";

/// `$1` origin, `$2` time, `$3` the events: numbered after the newest, inserted, and the
/// channel told the new newest id.
const APPEND: &str = "
WITH head AS (SELECT coalesce(max(id), 0) AS id FROM toolgate_events),
     added AS (
        INSERT INTO toolgate_events (id, origin, time_ms, event)
        SELECT head.id + added.n, added.origin, $2::bigint, added.event
          FROM head, unnest($1::text[], $3::text[]) WITH ORDINALITY AS added(origin, event, n)
        RETURNING id)
SELECT pg_notify('toolgate_events', (SELECT max(id) FROM added)::text)";

/// Old events go, never the newest (whose id the next append continues from).
const CLEAN: &str = "DELETE FROM toolgate_events
    WHERE time_ms < $1::bigint AND id < (SELECT max(id) FROM toolgate_events)";

impl EventLog for PostgresStore {
    fn append(&self, events: Vec<LoggedEvent>) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let now = crate::util::time::now_millis() as i64;
            let (origins, jsons): (Vec<String>, Vec<String>) = events
                .into_iter()
                .map(|event| (event.origin, event.json))
                .unzip();
            let mut client = self.client().await?;
            let transaction = client.transaction().await.map_err(self.failed())?;
            // Events are for watching: their commit need not wait for the disk (a crash of
            // the server may lose the last moment's, never the audit trail's records).
            let lock = format!(
                "SET LOCAL synchronous_commit TO OFF; SELECT pg_advisory_xact_lock({APPEND_LOCK})"
            );
            transaction
                .batch_execute(&lock)
                .await
                .map_err(self.failed())?;
            transaction
                .execute(APPEND, &[&origins, &now, &jsons])
                .await
                .map_err(self.failed())?;
            if self.inner.clean_events.now() {
                let before = now - EVENTS_KEPT_MS;
                transaction
                    .execute(CLEAN, &[&before])
                    .await
                    .map_err(self.failed())?;
            }
            transaction.commit().await.map_err(self.failed())
        })
    }

    fn after(&self, after: u64, limit: usize) -> StoreFuture<'_, Vec<LoggedEvent>> {
        Box::pin(async move {
            let client = self.client().await?;
            let (after, limit) = (after.min(i64::MAX as u64) as i64, limit as i64);
            let rows = client
                .query(
                    "SELECT id, origin, event FROM toolgate_events WHERE id > $1 ORDER BY id LIMIT $2",
                    &[&after, &limit],
                )
                .await
                .map_err(self.failed())?;
            Ok(rows
                .into_iter()
                .map(|row| LoggedEvent {
                    id: row.get::<_, i64>(0) as u64,
                    origin: row.get(1),
                    json: row.get(2),
                })
                .collect())
        })
    }

    fn newest(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_one("SELECT coalesce(max(id), 0) FROM toolgate_events", &[])
                .await
                .map_err(self.failed())?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }

    fn wait_for_news(&self, after: u64, longest: Duration) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut news = self.inner.news.heard();
            if *news.borrow_and_update() > after {
                return Ok(());
            }
            let _ = tokio::time::timeout(longest, news.changed()).await;
            Ok(())
        })
    }

    fn lease<'a>(&'a self, origin: &'a str, until_ms: u64) -> StoreFuture<'a, ()> {
        Box::pin(self.renew_lease(origin, until_ms))
    }

    fn followed_by_others<'a>(&'a self, origin: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let client = self.client().await?;
            let now = crate::util::time::now_millis() as i64;
            let row = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM toolgate_event_followers WHERE origin <> $1 AND until_ms >= $2)",
                    &[&origin, &now],
                )
                .await
                .map_err(self.failed())?;
            Ok(row.get(0))
        })
    }
}

impl PostgresStore {
    async fn renew_lease(&self, origin: &str, until_ms: u64) -> Result<(), StoreError> {
        let client = self.client().await?;
        let now = crate::util::time::now_millis() as i64;
        client
            .execute(
                "INSERT INTO toolgate_event_followers (origin, until_ms) VALUES ($1, $2)
                 ON CONFLICT (origin) DO UPDATE SET until_ms = EXCLUDED.until_ms",
                &[&origin, &(until_ms.min(i64::MAX as u64) as i64)],
            )
            .await
            .map_err(self.failed())?;
        client
            .execute(
                "DELETE FROM toolgate_event_followers WHERE until_ms < $1",
                &[&now],
            )
            .await
            .map_err(self.failed())?;
        Ok(())
    }
}

/// The newest id notified, kept current by a listening task started on first use.
pub(super) struct News {
    newest: Arc<watch::Sender<u64>>,
    config: tokio_postgres::Config,
    name: String,
    listening: AtomicBool,
}

impl News {
    pub(super) fn new(mut config: tokio_postgres::Config, name: String) -> News {
        config.application_name(LISTENER_NAME);
        News {
            newest: Arc::new(watch::Sender::new(0)),
            config,
            name,
            listening: AtomicBool::new(false),
        }
    }

    /// A receiver of the newest id notified (changed also when the listener reconnects, so
    /// followers look for what they missed).
    fn heard(&self) -> watch::Receiver<u64> {
        if !self.listening.swap(true, Ordering::AcqRel) {
            let (config, name) = (self.config.clone(), self.name.clone());
            tokio::spawn(listen(config, name, Arc::downgrade(&self.newest)));
        }
        self.newest.subscribe()
    }
}

/// Keeps one connection listening, reconnecting with backoff, until the store is gone.
async fn listen(config: tokio_postgres::Config, name: String, newest: Weak<watch::Sender<u64>>) {
    let mut pause = Duration::from_millis(100);
    let mut said = false;
    loop {
        match listen_once(&config, &newest).await {
            Ok(()) => {
                pause = Duration::from_millis(100);
                said = false;
            }
            Err(error) if !said => {
                said = true;
                tracing::warn!(target: "toolgate::events", store = %name, %error,
                    "cannot listen for the other instances' events; trying again");
            }
            Err(_) => {}
        }
        if newest.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// Listens on one connection until it drops (`Ok`) or cannot be opened (`Err`).
async fn listen_once(
    config: &tokio_postgres::Config,
    newest: &Weak<watch::Sender<u64>>,
) -> Result<(), String> {
    let (client, mut connection) = config
        .connect(NoTls)
        .await
        .map_err(|error| super::described(&error))?;
    let (heard, mut hearing) = mpsc::unbounded_channel();
    let driving = tokio::spawn(async move {
        while let Some(Ok(message)) =
            std::future::poll_fn(|context| connection.poll_message(context)).await
        {
            if let AsyncMessage::Notification(notification) = message {
                let _ = heard.send(notification.payload().parse::<u64>().unwrap_or(0));
            }
        }
    });
    let listening = client.batch_execute(&format!("LISTEN {CHANNEL}")).await;
    if let Err(error) = listening {
        driving.abort();
        return Err(super::described(&error));
    }
    // Listening again: whatever was appended while not listening is looked for now.
    tell(newest, None);
    loop {
        match tokio::time::timeout(Duration::from_secs(5), hearing.recv()).await {
            Ok(Some(id)) => tell(newest, Some(id)),
            Ok(None) => return Ok(()),
            Err(_) if newest.strong_count() == 0 => break,
            Err(_) => {}
        }
    }
    driving.abort();
    Ok(())
}

fn tell(newest: &Weak<watch::Sender<u64>>, id: Option<u64>) {
    if let Some(newest) = newest.upgrade() {
        newest.send_modify(|newest| *newest = id.map_or(*newest, |id| id.max(*newest)));
    }
}
