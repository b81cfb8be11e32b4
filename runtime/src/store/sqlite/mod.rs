//! State in one SQLite file: survives restarts, needs no server; several processes on one
//! machine may share the file (writes are serialized by SQLite's lock).
//!
//! ```no_run
//! # async fn example() -> Result<(), toolgate::store::StoreError> {
//! use toolgate::store::sqlite::SqliteStore;
//!
//! let store = SqliteStore::open("state.db").await?;
//! let registry = toolgate::Registry::builder().roles(["user"]).stores(&store.stores()).build();
//! # let _ = registry;
//! # Ok(())
//! # }
//! ```

mod audit;
mod budgets;
mod events;
mod grants;
mod pending;
mod rate;
mod runs;
mod schema;
mod sessions;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension};

use crate::store::rows::Every;
use crate::store::{StoreError, StoreFuture, Stores};
use crate::util::sync::lock;

/// How long a writer waits for another one (in this process or another) before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Every kind of state in one SQLite file. Cheap to clone; all clones share one connection.
#[derive(Clone)]
pub struct SqliteStore {
    database: Arc<Database>,
}

struct Database {
    /// `sqlite (PATH)`, for errors.
    name: String,
    connection: Mutex<Connection>,
    /// When to drop rate-limit budgets that are full again.
    clean_budgets: Every<1024>,
    /// When to drop events past their time.
    clean_events: Every<64>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("database", &self.database.name)
            .finish()
    }
}

impl SqliteStore {
    /// Opens (creating it if missing) the file, and creates or updates toolgate's tables.
    /// Fails if the file is not a database, cannot be written, or holds a newer schema.
    pub async fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path: PathBuf = path.as_ref().to_path_buf();
        let name = format!("SQLite ({})", path.display());
        let opened = tokio::task::spawn_blocking({
            let name = name.clone();
            move || open_file(&path, &name)
        })
        .await
        .map_err(|error| StoreError::unavailable(name.clone(), error))??;
        Ok(SqliteStore {
            database: Arc::new(Database {
                name,
                connection: Mutex::new(opened),
                clean_budgets: Every::default(),
                clean_events: Every::default(),
            }),
        })
    }

    /// One store of each kind, all in this file.
    pub fn stores(&self) -> Stores {
        Stores::all_in(self)
    }

    /// Runs `work` on the connection, off the async threads.
    fn run<'a, T: Send + 'static>(
        &'a self,
        work: impl FnOnce(&mut Connection, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> StoreFuture<'a, T> {
        let database = Arc::clone(&self.database);
        Box::pin(async move {
            let name = database.name.clone();
            tokio::task::spawn_blocking(move || {
                let mut connection = lock(&database.connection);
                work(&mut connection, &database.name)
            })
            .await
            .map_err(|error| StoreError::unavailable(name, error))?
        })
    }
}

fn open_file(path: &Path, name: &str) -> Result<Connection, StoreError> {
    let mut connection = Connection::open(path).map_err(failed(name))?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(failed(name))?;
    // WAL: readers do not block the writer; NORMAL: a commit survives a crash of the
    // process (not necessarily of the machine's power), at a fraction of FULL's cost.
    connection
        .pragma_update(None, "journal_mode", "WAL")
        .map_err(failed(name))?;
    connection
        .pragma_update(None, "synchronous", "NORMAL")
        .map_err(failed(name))?;
    schema::migrate(&mut connection, name)?;
    Ok(connection)
}

/// The stored text in the first column of the row `sql` returns, if it returns one.
fn text_of(
    connection: &Connection,
    name: &str,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Option<String>, StoreError> {
    connection
        .query_row(sql, params, |row| row.get(0))
        .optional()
        .map_err(failed(name))
}

/// Maps a driver error to the store's error.
fn failed(name: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |error| StoreError::unavailable(name, error)
}

/// Microseconds since the Unix epoch.
fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_micros() as i64)
}
