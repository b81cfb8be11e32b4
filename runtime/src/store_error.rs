//! What a store answers when it cannot do its job, and the future its operations return.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::error::{ErrorCode, ToolError};

/// The future of one store operation.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why a store operation failed. The message names the store and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// The database could not be reached or refused the operation.
    Unavailable {
        /// Which store (`"sqlite"`, `"postgres"`, ...) and where.
        store: String,
        /// What went wrong, from the driver.
        detail: String,
    },
    /// The database was set up by a newer toolgate; this one will not touch it.
    NewerSchema {
        /// Which store and where.
        store: String,
        /// The schema version found.
        found: i64,
        /// The newest version this toolgate knows.
        supported: i64,
    },
    /// Stored data that cannot be read back (changed by hand, or by another program).
    Corrupt {
        /// Which store and where.
        store: String,
        /// What could not be read.
        detail: String,
    },
    /// The address of a store is not one toolgate can open.
    BadAddress(String),
}

impl StoreError {
    /// An [`Unavailable`](StoreError::Unavailable) error.
    pub fn unavailable(store: impl Into<String>, detail: impl fmt::Display) -> Self {
        StoreError::Unavailable {
            store: store.into(),
            detail: detail.to_string(),
        }
    }

    /// A [`Corrupt`](StoreError::Corrupt) error.
    pub fn corrupt(store: impl Into<String>, detail: impl fmt::Display) -> Self {
        StoreError::Corrupt {
            store: store.into(),
            detail: detail.to_string(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Unavailable { store, detail } => {
                write!(f, "the {store} store is unavailable: {detail}")
            }
            StoreError::NewerSchema {
                store,
                found,
                supported,
            } => write!(
                f,
                "the {store} store has schema version {found}, newer than the {supported} this \
                 toolgate knows; upgrade toolgate, or use another database"
            ),
            StoreError::Corrupt { store, detail } => {
                write!(
                    f,
                    "the {store} store holds data that cannot be read: {detail}"
                )
            }
            StoreError::BadAddress(detail) => write!(f, "{detail}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// A store operation that is already done.
pub(crate) fn ready<'a, T: Send + 'a>(result: Result<T, StoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(result))
}

/// A call refused because a store it needs could not answer.
pub(crate) fn unavailable(error: StoreError) -> ToolError {
    tracing::error!(%error, "a store could not answer; the call is refused");
    ToolError::new(
        ErrorCode::StoreUnavailable,
        "this call could not be checked (a store is unavailable); it did not run. Try again later",
    )
}
