//! Creating and updating toolgate's tables in a SQLite file.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::failed;
use crate::audit::GENESIS;
use crate::store::StoreError;
use crate::store::schema::{SCHEMA_VERSION, VERSION_TABLE, needed};

/// Brings the file's schema to [`SCHEMA_VERSION`], in one transaction that other processes
/// wait for; refuses a newer schema.
pub(super) fn migrate(connection: &mut Connection, name: &str) -> Result<(), StoreError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed(name))?;
    transaction
        .execute_batch(VERSION_TABLE)
        .map_err(failed(name))?;
    let found: i64 = transaction
        .query_row("SELECT version FROM toolgate_schema", [], |row| row.get(0))
        .optional()
        .map_err(failed(name))?
        .unwrap_or(0);
    for migration in needed(name, found)? {
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
