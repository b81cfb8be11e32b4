//! Every call leaves exactly one audit record, secrets redacted; the JSON Lines file keeps a
//! hash chain that survives concurrency and crashes and exposes tampering.

use std::fs;
use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::audit::{
    AuditRecord, AuditSink, JsonlFileSink, LogProblem, REDACTED, TracingSink, verify_log,
};
use toolgate::policy::PolicyMode;
use toolgate::prelude::*;
use toolgate_tests::capture_logs;

/// Log in to a service.
#[tool(permission = "user", read_only)]
fn login(
    user: String,
    #[secret] password: String,
    #[secret]
    #[serde(rename = "apiKey")]
    api_key: Option<String>,
) -> String {
    let _ = (password, api_key);
    format!("{user} logged in")
}

/// Wipe a disk.
#[tool(permission = "user", destructive)]
fn wipe(disk: String) -> String {
    format!("wiped {disk}")
}

/// Crash.
#[tool(permission = "user", read_only)]
fn crash() -> u8 {
    panic!("crash")
}

/// Count.
#[tool(permission = "user", read_only)]
fn count(n: u32) -> u32 {
    n
}

fn user() -> Caller {
    Caller::new("alice", "user")
}

/// Keeps records in memory, to look at them.
#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<AuditRecord>>>);

impl AuditSink for Collect {
    fn record(&self, record: &AuditRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_leaves_one_record_even_when_it_never_ran() {
    let collected = Collect::default();
    let registry = Registry::builder()
        .roles(["user"])
        .policy_mode(PolicyMode::Prompt)
        .audit_sink(collected.clone())
        .build()
        .unwrap();
    let calls = vec![
        ToolCall::new(
            "1",
            "login",
            json!({"user": "alice", "password": "hunter2", "apiKey": "sk-123"}),
        ),
        ToolCall::new("2", "no_such_tool", json!({"x": 1})),
        ToolCall::new("3", "login", "{not json"),
        ToolCall::new("4", "login", json!({"user": "alice", "password": 5})),
        ToolCall::new("5", "wipe", json!({"disk": "sda"})),
        ToolCall::new("6", "crash", json!({})),
    ];
    registry.run_batch(&user(), calls).await;
    let denied = Registry::builder()
        .roles(["user"])
        .policy_mode(PolicyMode::Deny)
        .audit_sink(collected.clone())
        .build()
        .unwrap();
    denied
        .call(&user(), ToolCall::new("7", "wipe", json!({"disk": "sdb"})))
        .await;

    let mut records = collected.0.lock().unwrap().clone();
    records.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    let summary: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| (r.call_id.as_str(), r.decision.as_str(), r.outcome.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("1", "allow", "ok"),
            ("2", "not_reached", "unknown_tool"),
            ("3", "not_reached", "invalid_arguments"),
            ("4", "not_reached", "invalid_arguments"),
            ("5", "pending_approval", "approval_required"),
            ("6", "allow", "panicked"),
            ("7", "deny", "denied"),
        ]
    );
    let login = &records[0];
    assert_eq!(
        (
            login.caller.as_str(),
            login.role.as_str(),
            login.tool.as_str()
        ),
        ("alice", "user", "login")
    );
    assert_eq!(
        login.arguments,
        json!({"user": "alice", "password": REDACTED, "apiKey": REDACTED})
    );
    assert_eq!(
        (
            records[2].arguments["unreadable"].clone(),
            records[2].arguments["bytes"].clone()
        ),
        (json!(true), json!(9)),
        "unreadable arguments are kept as their size and hash, never as text"
    );
    assert_eq!(records[2].arguments["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(
        records[3].arguments["password"], REDACTED,
        "secrets are redacted even in invalid calls"
    );
    assert!(
        records
            .iter()
            .all(|r| r.duration_ms >= 0.0 && r.time_ms > 0)
    );
    assert!(!serde_json::to_string(&records).unwrap().contains("hunter2"));
}

#[tokio::test]
async fn approvals_are_recorded_with_the_approver() {
    let collected = Collect::default();
    let registry = Registry::builder()
        .roles(["user"])
        .audit_sink(collected.clone())
        .build()
        .unwrap();
    let waiting = registry
        .call(&user(), ToolCall::new("w", "wipe", json!({"disk": "sdc"})))
        .await;
    let ticket = waiting.error().unwrap().details.as_ref().unwrap()["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    registry
        .approve(&ticket, &Caller::new("boss", "user"))
        .await
        .unwrap();
    let records = collected.0.lock().unwrap().clone();
    assert_eq!(records.len(), 2);
    assert_eq!(
        (records[0].decision.as_str(), records[0].outcome.as_str()),
        ("pending_approval", "approval_required")
    );
    assert_eq!(
        (records[1].decision.as_str(), records[1].outcome.as_str()),
        ("approved", "ok")
    );
    assert_eq!(records[1].approver.as_deref(), Some("boss"));
    assert_eq!(
        records[1].caller, "alice",
        "the approved call runs as its caller"
    );
}

#[tokio::test]
async fn history_gives_a_callers_last_calls_newest_first() {
    let registry = Registry::builder()
        .roles(["user"])
        .history_capacity(100)
        .build()
        .unwrap();
    for n in 0..5 {
        registry
            .call(
                &user(),
                ToolCall::new(n.to_string(), "count", json!({ "n": n })),
            )
            .await;
    }
    registry
        .call(
            &Caller::new("bob", "user"),
            ToolCall::new("b", "count", json!({"n": 9})),
        )
        .await;
    let last: Vec<String> = registry
        .history("alice", 3)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.call_id)
        .collect();
    assert_eq!(last, ["4", "3", "2"]);
    assert_eq!(registry.history("bob", 10).await.unwrap().len(), 1);
    assert!(registry.history("nobody", 10).await.unwrap().is_empty());
}

/// A full history overwrites its oldest records in place: what is read back is exactly the
/// last calls, each whole (its own id, tool, arguments, caller and outcome), however often
/// the history has wrapped around.
#[tokio::test]
async fn a_full_history_keeps_exactly_the_last_calls_whole() {
    let registry = Registry::builder()
        .roles(["user"])
        .history_capacity(3)
        .build()
        .unwrap();
    let bob = Caller::new("bob", "user");
    for n in 0..10u32 {
        let caller = if n % 2 == 0 { user() } else { bob.clone() };
        // Every third call fails (an unknown tool), with a longer id than the others.
        let (id, tool) = if n % 3 == 0 {
            (format!("a-much-longer-call-id-{n}"), "missing")
        } else {
            (n.to_string(), "count")
        };
        registry
            .call(&caller, ToolCall::new(id, tool, json!({ "n": n })))
            .await;
    }
    let seen = |records: Vec<AuditRecord>| -> Vec<(String, String, String, Value)> {
        records
            .into_iter()
            .map(|r| (r.call_id, r.tool, r.outcome, r.arguments))
            .collect()
    };
    // The last three calls: 7 (bob), 8 (alice), 9 (bob, failed).
    assert_eq!(
        seen(registry.history("bob", 10).await.unwrap()),
        [
            (
                "a-much-longer-call-id-9".into(),
                "missing".into(),
                "unknown_tool".into(),
                json!(null)
            ),
            ("7".into(), "count".into(), "ok".into(), json!({"n": 7})),
        ]
    );
    assert_eq!(
        seen(registry.history("alice", 10).await.unwrap()),
        [("8".into(), "count".into(), "ok".into(), json!({"n": 8}))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_calls_leave_ten_thousand_chained_records() {
    let directory = TempDir::new().unwrap();
    let path = directory.path().join("audit.jsonl");
    let registry = Registry::builder()
        .roles(["user"])
        .audit_sink(JsonlFileSink::open(&path).unwrap())
        .history_capacity(0)
        .build()
        .unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..100 {
        let registry = registry.clone();
        tasks.spawn(async move {
            for n in 0..100 {
                let id = format!("{task}-{n}");
                registry
                    .call(&user(), ToolCall::new(id, "count", json!({ "n": n })))
                    .await;
            }
        });
    }
    tasks.join_all().await;
    let log = verify_log(&path).unwrap();
    assert_eq!(log.records.len(), 10_000);
    assert!(!log.torn_tail);
    let mut ids: Vec<&str> = log.records.iter().map(|r| r.call_id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10_000, "every call exactly once");
    assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 10_000);
}

fn write_log(path: &std::path::Path, count: u32) -> Vec<String> {
    let sink = JsonlFileSink::open(path).unwrap();
    for n in 0..count {
        sink.record(&AuditRecord {
            time_ms: 1_700_000_000_000 + u64::from(n),
            caller: "alice".into(),
            issuer: None,
            role: "user".into(),
            tool: "count".into(),
            call_id: n.to_string(),
            arguments: json!({ "n": n }),
            decision: "allow".into(),
            approver: None,
            outcome: "ok".into(),
            duration_ms: 0.5,
        });
    }
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn an_altered_record_is_named() {
    let directory = TempDir::new().unwrap();
    let path = directory.path().join("audit.jsonl");
    let mut lines = write_log(&path, 6);
    assert_eq!(verify_log(&path).unwrap().records.len(), 6);
    lines[3] = lines[3].replace("\"outcome\":\"ok\"", "\"outcome\":\"denied\"");
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    assert_eq!(
        verify_log(&path).unwrap_err(),
        LogProblem::Altered { line: 4 }
    );
}

#[test]
fn a_removed_record_is_named() {
    let directory = TempDir::new().unwrap();
    let path = directory.path().join("audit.jsonl");
    let mut lines = write_log(&path, 6);
    lines.remove(2);
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    let problem = verify_log(&path).unwrap_err();
    assert_eq!(problem, LogProblem::Removed { line: 3 });
    assert!(problem.to_string().contains("before line 3"));
    // Removing the first record is noticed too.
    let lines = write_log(&directory.path().join("b.jsonl"), 3);
    fs::write(
        directory.path().join("b.jsonl"),
        lines[1..].join("\n") + "\n",
    )
    .unwrap();
    assert_eq!(
        verify_log(directory.path().join("b.jsonl")).unwrap_err(),
        LogProblem::Removed { line: 1 }
    );
}

#[test]
fn a_rewritten_record_with_a_recomputed_hash_breaks_the_chain() {
    let directory = TempDir::new().unwrap();
    let path = directory.path().join("audit.jsonl");
    let lines = write_log(&path, 4);
    // Rewrite line 2 and give it a correct hash of its own (the hash of the line's bytes up
    // to `,"hash"`, closed by `}`): line 3 no longer follows it.
    let mut record: Value = serde_json::from_str(&lines[1]).unwrap();
    record["outcome"] = json!("denied");
    record.as_object_mut().unwrap().remove("hash");
    let unhashed = record.to_string();
    let hash = {
        use std::fmt::Write as _;
        let digest = <sha2::Sha256 as sha2::Digest>::digest(unhashed.as_bytes());
        digest.iter().fold(String::new(), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
    };
    let mut lines = lines;
    lines[1] = format!("{},\"hash\":\"{hash}\"}}", &unhashed[..unhashed.len() - 1]);
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    assert_eq!(
        verify_log(&path).unwrap_err(),
        LogProblem::Removed { line: 3 }
    );
}

#[test]
fn a_torn_last_line_is_detected_and_cut_off_on_reopening() {
    let directory = TempDir::new().unwrap();
    let path = directory.path().join("audit.jsonl");
    write_log(&path, 3);
    // A crash in the middle of writing the fourth record.
    let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(br#"{"time_ms":1700000000003,"caller":"ali"#)
        .unwrap();
    drop(file);
    let log = verify_log(&path).unwrap();
    assert!(log.torn_tail);
    assert_eq!(log.records.len(), 3, "the lines before it are intact");
    // Reopening cuts the torn line and continues the chain.
    let lines = write_log(&path, 2);
    assert_eq!(lines.len(), 5);
    let log = verify_log(&path).unwrap();
    assert!(!log.torn_tail);
    assert_eq!(log.records.len(), 5);
}

#[test]
fn the_tracing_sink_emits_one_event_per_record() {
    let ((), log) = capture_logs(|| {
        TracingSink.record(&AuditRecord {
            time_ms: 1,
            caller: "alice".into(),
            issuer: None,
            role: "user".into(),
            tool: "count".into(),
            call_id: "c-1".into(),
            arguments: json!({"n": 1}),
            decision: "allow".into(),
            approver: None,
            outcome: "ok".into(),
            duration_ms: 0.1,
        });
    });
    assert_eq!(log.lines().count(), 1);
    assert!(log.contains("toolgate::audit"), "{log}");
    assert!(
        log.contains("call_id=c-1") && log.contains("outcome=ok"),
        "{log}"
    );
}

/// `TracingSink` wants records only while a subscriber listens: a call made with none
/// builds no record for it (and is still in the history); one made with a subscriber is
/// logged.
#[test]
fn the_tracing_sink_wants_records_only_while_a_subscriber_listens() {
    let registry = Registry::builder()
        .roles(["user"])
        .audit_sink(TracingSink)
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = |id: &str| {
        let call = ToolCall::new(id, "count", json!({"n": 1}));
        runtime.block_on(registry.call(&user(), call))
    };
    assert!(!TracingSink.wants_records());
    assert!(call("unheard").result.is_ok());
    let ((), log) = capture_logs(|| {
        assert!(TracingSink.wants_records());
        assert!(call("heard").result.is_ok());
    });
    assert!(log.contains("call_id=heard"), "{log}");
    assert!(!log.contains("unheard"), "{log}");
    let kept: Vec<String> = runtime
        .block_on(registry.history("alice", 10))
        .unwrap()
        .into_iter()
        .map(|record| record.call_id)
        .collect();
    assert_eq!(kept, ["heard", "unheard"]);
}
