//! toolgate's tables, the same for SQLite and PostgreSQL (the types are ones both accept),
//! and which migrations a database still needs.

use crate::store::StoreError;

/// The schema version the database stores create and understand.
pub(crate) const SCHEMA_VERSION: i64 = 4;

/// Migration `n` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    r#"
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
"#,
    r#"
CREATE TABLE toolgate_sessions (
    key TEXT PRIMARY KEY,
    expires BIGINT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX toolgate_sessions_expires ON toolgate_sessions (expires);
"#,
    r#"
CREATE TABLE toolgate_budgets (
    key TEXT PRIMARY KEY,
    used BIGINT NOT NULL,
    expires BIGINT NOT NULL
);
CREATE INDEX toolgate_budgets_expires ON toolgate_budgets (expires);
"#,
    r#"
CREATE TABLE toolgate_events (
    id BIGINT PRIMARY KEY,
    origin TEXT NOT NULL,
    time_ms BIGINT NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX toolgate_events_time ON toolgate_events (time_ms);
CREATE TABLE toolgate_event_followers (
    origin TEXT PRIMARY KEY,
    until_ms BIGINT NOT NULL
);
"#,
];

/// How long the event logs keep events (a follower away longer misses the older ones): long
/// enough for a dropped connection to come back, short enough that a busy deployment's table
/// stays small (at 3,500 events a second, about a million rows).
pub(crate) const EVENTS_KEPT_MS: i64 = 5 * 60 * 1000;

/// Where the version is kept.
pub(crate) const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS toolgate_schema (version BIGINT NOT NULL)";

/// The migrations a database at version `found` needs (all of them for a new one), or the
/// error for a schema newer than this toolgate knows.
pub(crate) fn needed(name: &str, found: i64) -> Result<&'static [&'static str], StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            store: name.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(&MIGRATIONS[found.max(0) as usize..])
}
