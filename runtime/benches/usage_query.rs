//! The time of a usage query (`Registry::usage`) over 1,000,000 audit records, on SQLite and
//! on PostgreSQL (a server the bench starts on 127.0.0.1). The records are written straight
//! into the table (the chain's hashes are not what a usage query reads), spread over five
//! tools, eight callers, two roles and a day; three queries each, the median reported.
//!
//! `cargo bench -p toolgate --features sqlite,postgres --bench usage_query`

use std::time::Instant;

use toolgate::prelude::*;
use toolgate::store::Stores;
use toolgate::store::postgres::PostgresStore;
use toolgate::store::sqlite::SqliteStore;
use toolgate_test_support::TempPostgres;

const RECORDS: u64 = 1_000_000;
/// The records' times: one day from this moment, one record every 86 ms.
const START_MS: u64 = 1_764_000_000_000;

/// The body of record `g` as SQL builds it (`{g}` the row number): what the stores keep.
const BODY_SQL: &str = "json_object('time_ms', 1764000000000 + {g} * 86, 'caller', 'caller-' || ({g} % 8), \
     'role', CASE WHEN {g} % 8 < 2 THEN 'staff' ELSE 'public' END, 'tool', 'tool_' || ({g} % 5), \
     'call_id', 'c' || {g}, 'arguments', json_object('n', {g}), \
     'decision', CASE WHEN {g} % 97 = 0 THEN 'pending_approval' ELSE 'allow' END, 'approver', NULL, \
     'outcome', CASE WHEN {g} % 97 = 0 THEN 'approval_required' WHEN {g} % 13 = 0 THEN 'execution_failed' ELSE 'ok' END, \
     'duration_ms', ({g} % 100) / 10.0)";

/// Tools `tool_0` … `tool_4`, so the records' tools are the registry's.
fn registry(stores: &Stores) -> Registry {
    let mut builder = Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .stores(stores);
    for n in 0..5 {
        let schema = serde_json::json!({"type": "object"});
        let definition =
            toolgate::ToolDefinition::new(format!("tool_{n}"), "A tool.", "public", schema);
        let tool = toolgate::FnTool::new(definition, |_, _| async { Ok(serde_json::json!(1)) });
        builder = builder.tool(tool);
    }
    builder.build().unwrap()
}

fn sqlite_filled(path: &std::path::Path) {
    let connection = rusqlite::Connection::open(path).unwrap();
    let body = BODY_SQL.replace("{g}", "g");
    connection
        .execute_batch(&format!(
            "BEGIN; WITH RECURSIVE n(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM n WHERE g < {last}) \
             INSERT INTO toolgate_audit (seq, caller, body, hash) SELECT g, 'caller-' || (g % 8), {body}, 'x' FROM n; COMMIT;",
            last = RECORDS - 1
        ))
        .unwrap();
}

async fn postgres_filled(url: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let body = BODY_SQL
        .replace("{g}", "g")
        .replace("json_object(", "json_build_object(")
        .replace(" || ", "::text || ");
    client
        .batch_execute(&format!(
            "INSERT INTO toolgate_audit (seq, caller, body, hash) \
             SELECT g, 'caller-' || (g % 8), ({body})::text, 'x' FROM generate_series(0, {last}) AS g",
            last = RECORDS - 1
        ))
        .await
        .unwrap();
}

async fn timed(name: &str, registry: &Registry) {
    let viewer = Caller::new("admin", "staff");
    let mut seconds = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let report = registry
            .usage(&viewer, START_MS, START_MS + RECORDS * 86)
            .await
            .unwrap();
        seconds.push(started.elapsed().as_secs_f64());
        assert_eq!(report.by_tool.len(), 5);
        let counted: u64 = report.calls
            + report
                .by_tool
                .iter()
                .map(|t| t.approvals.waiting + t.approvals.expired)
                .sum::<u64>();
        assert_eq!(counted, RECORDS, "every record is a call or a ticket");
    }
    seconds.sort_by(f64::total_cmp);
    println!(
        "{name:<10} usage over {RECORDS} records: {:.2} s (median of 3; {:.2}–{:.2})",
        seconds[1], seconds[0], seconds[2]
    );
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("state.db");
    runtime.block_on(async {
        let store = SqliteStore::open(&path).await.unwrap();
        sqlite_filled(&path);
        timed("SQLite", &registry(&store.stores())).await;
    });
    let server = TempPostgres::start();
    let url = server.new_database();
    runtime.block_on(async {
        let store = PostgresStore::connect(&url).await.unwrap();
        postgres_filled(&url).await;
        timed("PostgreSQL", &registry(&store.stores())).await;
    });
    drop(server);
}
