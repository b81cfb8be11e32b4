//! State in PostgreSQL, shared by every instance of an application: a ticket issued by one
//! instance is decided on another, once; rate-limit budgets hold across all of them; every
//! instance extends one audit chain.
//!
//! ```no_run
//! # async fn example() -> Result<(), toolgate::store::StoreError> {
//! use toolgate::store::postgres::PostgresStore;
//!
//! let store = PostgresStore::connect("postgres://toolgate@127.0.0.1:5432/toolgate").await?;
//! let registry = toolgate::Registry::builder()
//!     .roles(["user"])
//!     .stores(&store.stores())
//!     // Every instance must sign tickets with the same key to redeem each other's.
//!     .approval_key(std::env::var("APPROVAL_KEY").unwrap_or_default())
//!     .build();
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

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::types::ToSql;

use crate::store::group_commit::GroupCommit;
use crate::store::rows::Every;
use crate::store::{StoreError, Stores};

/// Connections each instance keeps open at most.
const POOL_SIZE: usize = 16;
/// How long to wait for the server to accept a connection, or for a free one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Every kind of state in one PostgreSQL database, over a pool of connections. Cheap to
/// clone.
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

struct Inner {
    /// `PostgreSQL (host:port/database)`, for errors; never the password.
    name: String,
    pool: Pool,
    /// When to drop rate-limit budgets that are full again.
    clean_budgets: Every<1024>,
    /// Audit records waiting to be appended together.
    appending: GroupCommit<crate::audit::AuditRecord>,
    /// Where the other instances' events are heard of.
    news: events::News,
    /// When to drop events past their time.
    clean_events: Every<64>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("database", &self.inner.name)
            .finish()
    }
}

impl PostgresStore {
    /// Connects (`postgres://user[:password]@host[:port]/database`, or a `key=value`
    /// connection string), and creates or updates toolgate's tables. Fails with a clear error
    /// if the server cannot be reached, refuses the login, or holds a newer schema.
    pub async fn connect(address: &str) -> Result<PostgresStore, StoreError> {
        let mut config: tokio_postgres::Config = address.parse().map_err(|error| {
            StoreError::BadAddress(format!("not a PostgreSQL address: {error}"))
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        let name = describe(&config);
        let news = events::News::new(config.clone(), name.clone());
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(CONNECT_TIMEOUT))
            .wait_timeout(Some(WAIT_TIMEOUT))
            .build()
            .map_err(|error| StoreError::unavailable(name.clone(), error))?;
        let store = PostgresStore {
            inner: Arc::new(Inner {
                name,
                pool,
                clean_budgets: Every::default(),
                appending: GroupCommit::default(),
                news,
                clean_events: Every::default(),
            }),
        };
        let mut client = store.client().await?;
        schema::migrate(&mut client, &store.inner.name).await?;
        Ok(store)
    }

    /// One store of each kind, all in this database.
    pub fn stores(&self) -> Stores {
        Stores::all_in(self)
    }

    async fn client(&self) -> Result<Object, StoreError> {
        self.inner
            .pool
            .get()
            .await
            .map_err(|error| StoreError::unavailable(self.inner.name.clone(), error))
    }

    /// The stored text in the first column of the row `sql` returns, if it returns one.
    async fn text_of(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<String>, StoreError> {
        let client = self.client().await?;
        let row = client.query_opt(sql, params).await.map_err(self.failed())?;
        Ok(row.map(|row| row.get(0)))
    }

    fn should_clean(&self) -> bool {
        self.inner.clean_budgets.now()
    }

    fn name(&self) -> &str {
        &self.inner.name
    }

    /// Maps a driver error to the store's error.
    fn failed(&self) -> impl Fn(tokio_postgres::Error) -> StoreError + '_ {
        move |error| StoreError::unavailable(self.inner.name.clone(), described(&error))
    }
}

/// What went wrong, in the server's words where it answered (the driver's own text for a
/// server's error is only "db error").
fn described(error: &tokio_postgres::Error) -> String {
    let Some(server) = error.as_db_error() else {
        return error.to_string();
    };
    let mut text = format!("{}: {}", server.severity(), server.message());
    if let Some(detail) = server.detail() {
        text.push_str(&format!(" ({detail})"));
    }
    if let Some(hint) = server.hint() {
        text.push_str(&format!("; {hint}"));
    }
    text
}

/// Where the database is, without credentials.
fn describe(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let database = config.get_dbname().unwrap_or("(default database)");
    format!("PostgreSQL ({host}:{port}/{database})")
}
