//! Creating and updating toolgate's tables in PostgreSQL. Instances starting together take
//! an advisory lock, so each migration runs once.

use deadpool_postgres::Object;

use crate::audit::GENESIS;
use crate::store::StoreError;
use crate::store::schema::{SCHEMA_VERSION, VERSION_TABLE, needed};

/// Serializes migrations between instances (any constant; "tgschema" in ASCII).
const MIGRATION_LOCK: i64 = 0x7467_7363_6865_6d61;

/// Brings the database's schema to [`SCHEMA_VERSION`]; refuses a newer schema.
pub(super) async fn migrate(client: &mut Object, name: &str) -> Result<(), StoreError> {
    let failed = |error| StoreError::unavailable(name, error);
    let transaction = client.transaction().await.map_err(failed)?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(failed)?;
    transaction
        .batch_execute(VERSION_TABLE)
        .await
        .map_err(failed)?;
    let found: i64 = transaction
        .query_opt("SELECT version FROM toolgate_schema", &[])
        .await
        .map_err(failed)?
        .map_or(0, |row| row.get(0));
    for migration in needed(name, found)? {
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
