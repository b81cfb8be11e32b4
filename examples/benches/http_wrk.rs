//! Load from a separate process: `wrk` (apt-get install wrk) drives `POST /tools/call` through
//! toolgate's router and a bare axum handler calling the same function, on one server in this
//! process, in interleaved rounds (bare, toolgate, bare, toolgate, ...). Reports requests per
//! second and p99 latency of each round, and toolgate's ratio to the bare handler per round.
//!
//! `cargo bench -p toolgate-examples --bench http_wrk` (`WRK_SECONDS`, `WRK_ROUNDS`,
//! `WRK_CONNECTIONS` change the defaults: 10 s, 2 rounds, 32 connections)

mod common;

use std::process::Command;

use common::{BARE_BODY, BARE_PATH, TOOL_BODY, start};

/// What `wrk` measured in one round.
struct Round {
    requests_per_second: f64,
    p99_ms: f64,
}

fn main() {
    let arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let [target, count] = arguments.as_slice() {
        return requests_in_process(target, count.parse().expect("a request count"));
    }
    let seconds = setting("WRK_SECONDS", 10);
    let rounds = setting("WRK_ROUNDS", 2);
    let connections = setting("WRK_CONNECTIONS", 32);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let directory = std::env::temp_dir().join(format!("toolgate-wrk-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let base = start(&runtime, &directory.join("clinic.db"));
    let targets = [
        ("bare axum handler", format!("{base}{BARE_PATH}"), BARE_BODY),
        (
            "toolgate /tools/call",
            format!("{base}/tools/call"),
            TOOL_BODY,
        ),
    ];
    println!("{connections} connections, {seconds} s per round");
    for round in 1..=rounds {
        let measured: Vec<Round> = targets
            .iter()
            .map(|(name, url, body)| {
                let script = directory.join(format!("post-{round}.lua"));
                let measured = wrk(&script, url, body, seconds, connections);
                println!(
                    "round {round} {name:<22} {:>10.0} req/s  p99 {:>6.2} ms",
                    measured.requests_per_second, measured.p99_ms
                );
                measured
            })
            .collect();
        let (bare, tool) = (&measured[0], &measured[1]);
        println!(
            "round {round} toolgate / bare: {:.2}× requests per second, {:.2}× p99",
            tool.requests_per_second / bare.requests_per_second,
            tool.p99_ms / bare.p99_ms
        );
    }
    let _ = std::fs::remove_dir_all(directory);
}

/// `count` requests to one target (`bare` or `toolgate`) from a client in this process, one
/// thread for both: what a profiler (`valgrind --tool=callgrind`) looks at.
fn requests_in_process(target: &str, count: u64) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let directory = std::env::temp_dir().join(format!("toolgate-wrk-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let base = start(&runtime, &directory.join("clinic.db"));
    let (url, body) = match target {
        "bare" => (format!("{base}{BARE_PATH}"), BARE_BODY),
        _ => (format!("{base}/tools/call"), TOOL_BODY),
    };
    let client = reqwest::Client::new();
    runtime.block_on(async {
        for _ in 0..count {
            let response = client
                .post(&url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success());
            response.bytes().await.unwrap();
        }
    });
    let _ = std::fs::remove_dir_all(directory);
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Runs `wrk` posting `body` to `url`, and reads its report.
fn wrk(script: &std::path::Path, url: &str, body: &str, seconds: u64, connections: u64) -> Round {
    let lua = format!(
        "wrk.method = \"POST\"\nwrk.body = {}\nwrk.headers[\"Content-Type\"] = \"application/json\"\n",
        serde_json::to_string(body).unwrap()
    );
    std::fs::write(script, lua).unwrap();
    let output = Command::new("wrk")
        .args(["-t2", &format!("-c{connections}"), &format!("-d{seconds}s")])
        .arg("--latency")
        .arg("-s")
        .arg(script)
        .arg(url)
        .output()
        .expect("wrk is installed (apt-get install wrk)");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "wrk failed:\n{report}");
    assert!(
        !report.contains("Non-2xx"),
        "some requests were refused:\n{report}"
    );
    Round {
        requests_per_second: field(&report, "Requests/sec:").expect("wrk reports requests/sec"),
        p99_ms: field(&report, "99%").expect("wrk --latency reports the 99th percentile"),
    }
}

/// The number after `label` on its line, in milliseconds where it is a duration.
fn field(report: &str, label: &str) -> Option<f64> {
    let line = report
        .lines()
        .find(|line| line.trim_start().starts_with(label))?;
    let value = line.trim_start()[label.len()..].trim();
    let (number, scale) = if let Some(us) = value.strip_suffix("us") {
        (us, 0.001)
    } else if let Some(ms) = value.strip_suffix("ms") {
        (ms, 1.0)
    } else if let Some(s) = value.strip_suffix('s') {
        (s, 1000.0)
    } else {
        (value, 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|number| number * scale)
}
