//! toolgate's tables in PostgreSQL, created and updated by numbered migrations. Instances
//! starting together take an advisory lock, so each migration runs once.

use deadpool_postgres::Object;

use crate::audit::GENESIS;
use crate::store::{SCHEMA_VERSION, StoreError};

/// Serializes migrations between instances (any constant; "tgschema" in ASCII).
const MIGRATION_LOCK: i64 = 0x7467_7363_6865_6d61;

/// Migration `n` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [r#"
CREATE TABLE toolgate_pending (
    ticket_id TEXT PRIMARY KEY,
    expires BIGINT NOT NULL,
    call TEXT NOT NULL
);
CREATE INDEX toolgate_pending_expires ON toolgate_pending (expires);
CREATE TABLE toolgate_decided (
    ticket_id TEXT PRIMARY KEY,
    keep_until BIGINT NOT NULL,
    decided TEXT NOT NULL
);
CREATE TABLE toolgate_runs (
    id TEXT PRIMARY KEY,
    waiting BOOLEAN NOT NULL,
    updated_ms BIGINT NOT NULL,
    run TEXT NOT NULL
);
CREATE INDEX toolgate_runs_age ON toolgate_runs (waiting, updated_ms);
CREATE TABLE toolgate_grants (
    caller TEXT NOT NULL,
    tool TEXT NOT NULL,
    granted_by TEXT,
    time_ms BIGINT NOT NULL,
    PRIMARY KEY (caller, tool)
);
CREATE TABLE toolgate_rate_limits (
    key TEXT PRIMARY KEY,
    tat_us BIGINT NOT NULL
);
CREATE TABLE toolgate_audit (
    seq BIGINT PRIMARY KEY,
    caller TEXT NOT NULL,
    body TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX toolgate_audit_caller ON toolgate_audit (caller, seq);
CREATE TABLE toolgate_audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    next_seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
"#];

/// Brings the database's schema to [`SCHEMA_VERSION`]; refuses a newer schema.
pub(super) async fn migrate(client: &mut Object, name: &str) -> Result<(), StoreError> {
    let failed = |error| StoreError::unavailable(name, error);
    let transaction = client.transaction().await.map_err(failed)?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(failed)?;
    transaction
        .batch_execute("CREATE TABLE IF NOT EXISTS toolgate_schema (version BIGINT NOT NULL)")
        .await
        .map_err(failed)?;
    let found: i64 = transaction
        .query_opt("SELECT version FROM toolgate_schema", &[])
        .await
        .map_err(failed)?
        .map_or(0, |row| row.get(0));
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            store: name.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for migration in &MIGRATIONS[found as usize..] {
        transaction.batch_execute(migration).await.map_err(failed)?;
    }
    if found == 0 {
        transaction
            .execute(
                "INSERT INTO toolgate_audit_head (id, next_seq, hash) VALUES (1, 0, $1)",
                &[&GENESIS],
            )
            .await
            .map_err(failed)?;
    }
    transaction
        .execute("DELETE FROM toolgate_schema", &[])
        .await
        .map_err(failed)?;
    transaction
        .execute(
            "INSERT INTO toolgate_schema (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .await
        .map_err(failed)?;
    transaction.commit().await.map_err(failed)
}
