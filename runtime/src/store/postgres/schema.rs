//! Creating and updating toolgate's tables in PostgreSQL. Instances starting together take
//! an advisory lock, so each migration runs once.

use deadpool_postgres::Object;

use crate::audit::GENESIS;
use crate::store::StoreError;
use crate::store::schema::{SCHEMA_VERSION, VERSION_TABLE, needed};

/// Appends records to the audit chain in one statement (see `audit.rs`): under the head
/// row's lock, each record's body is completed with the previous hash and its number,
/// hashed as the chain's verifier hashes it, and inserted; then the head moves. Versioned in
/// its name, so instances of different toolgate versions each call their own.
const AUDIT_APPEND: &str = r#"
CREATE OR REPLACE FUNCTION toolgate_audit_append_v1(
    callers TEXT[], firsts TEXT[], middles TEXT[], lasts TEXT[]
) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    head_seq BIGINT;
    previous TEXT;
    body TEXT;
BEGIN
    SELECT next_seq, hash INTO head_seq, previous FROM toolgate_audit_head WHERE id = 1 FOR UPDATE;
    FOR i IN 1 .. coalesce(array_length(callers, 1), 0) LOOP
        body := firsts[i] || previous || middles[i] || head_seq::text || lasts[i];
        previous := encode(sha256(convert_to(body, 'UTF8')), 'hex');
        INSERT INTO toolgate_audit (seq, caller, body, hash) VALUES (head_seq, callers[i], body, previous);
        head_seq := head_seq + 1;
    END LOOP;
    UPDATE toolgate_audit_head SET next_seq = head_seq, hash = previous WHERE id = 1;
    RETURN head_seq;
END
$$"#;

/// Serializes migrations between instances (any constant; "tgschema" in ASCII).
const MIGRATION_LOCK: i64 = 0x7467_7363_6865_6d61;

/// Brings the database's schema to [`SCHEMA_VERSION`]; refuses a newer schema.
pub(super) async fn migrate(client: &mut Object, name: &str) -> Result<(), StoreError> {
    let failed =
        |error: tokio_postgres::Error| StoreError::unavailable(name, super::described(&error));
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
        .batch_execute(AUDIT_APPEND)
        .await
        .map_err(failed)?;
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
