//! toolgate's tables in a SQLite file, created and updated by numbered migrations.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::failed;
use crate::audit::GENESIS;
use crate::store::{SCHEMA_VERSION, StoreError};

/// Migration `n` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [r#"
CREATE TABLE toolgate_pending (
    ticket_id TEXT PRIMARY KEY,
    expires INTEGER NOT NULL,
    call TEXT NOT NULL
);
CREATE INDEX toolgate_pending_expires ON toolgate_pending (expires);
CREATE TABLE toolgate_decided (
    ticket_id TEXT PRIMARY KEY,
    keep_until INTEGER NOT NULL,
    decided TEXT NOT NULL
);
CREATE TABLE toolgate_runs (
    id TEXT PRIMARY KEY,
    waiting INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    run TEXT NOT NULL
);
CREATE INDEX toolgate_runs_age ON toolgate_runs (waiting, updated_ms);
CREATE TABLE toolgate_grants (
    caller TEXT NOT NULL,
    tool TEXT NOT NULL,
    granted_by TEXT,
    time_ms INTEGER NOT NULL,
    PRIMARY KEY (caller, tool)
);
CREATE TABLE toolgate_rate_limits (
    key TEXT PRIMARY KEY,
    tat_us INTEGER NOT NULL
);
CREATE TABLE toolgate_audit (
    seq INTEGER PRIMARY KEY,
    caller TEXT NOT NULL,
    body TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX toolgate_audit_caller ON toolgate_audit (caller, seq);
CREATE TABLE toolgate_audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    next_seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
"#];

/// Brings the file's schema to [`SCHEMA_VERSION`], in one transaction that other processes
/// wait for; refuses a newer schema.
pub(super) fn migrate(connection: &mut Connection, name: &str) -> Result<(), StoreError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed(name))?;
    transaction
        .execute_batch("CREATE TABLE IF NOT EXISTS toolgate_schema (version INTEGER NOT NULL)")
        .map_err(failed(name))?;
    let found: i64 = transaction
        .query_row("SELECT version FROM toolgate_schema", [], |row| row.get(0))
        .optional()
        .map_err(failed(name))?
        .unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            store: name.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for migration in &MIGRATIONS[found as usize..] {
        transaction.execute_batch(migration).map_err(failed(name))?;
    }
    if found == 0 {
        transaction
            .execute(
                "INSERT INTO toolgate_audit_head (id, next_seq, hash) VALUES (1, 0, ?1)",
                [GENESIS],
            )
            .map_err(failed(name))?;
    }
    transaction
        .execute("DELETE FROM toolgate_schema", [])
        .map_err(failed(name))?;
    transaction
        .execute(
            "INSERT INTO toolgate_schema (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )
        .map_err(failed(name))?;
    transaction.commit().map_err(failed(name))
}
