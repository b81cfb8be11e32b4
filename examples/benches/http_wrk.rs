//! Load from a separate process: `wrk` (apt-get install wrk) drives `POST /tools/call` through
//! toolgate's router and a bare axum handler calling the same function, on one server in this
//! process, in interleaved rounds (bare, toolgate; toolgate, bare; ...). Reports requests per
//! second and p99 latency of each round, toolgate's ratio to the bare handler per round, and
//! the median of those ratios (a shared machine makes single rounds swing by ±10 %: short
//! rounds, many of them, keep each pair close in time).
//!
//! Three tools are measured, each against a bare handler of its own: the clinic's
//! `get_clinic_hours` (bearer authentication, the clinic's audit sink) and the call benches'
//! `add` and `search` (a default registry).
//!
//! `cargo bench -p toolgate-examples --bench http_wrk` (`WRK_SECONDS`, `WRK_ROUNDS`,
//! `WRK_CONNECTIONS` change the defaults: 3 s, 10 rounds, 32 connections; `WRK_TOOLS=add,search`
//! measures only those)

mod common;

use std::process::Command;

use common::{WORKLOADS, Workload, calls_router, router, serve};

/// What `wrk` measured in one round.
struct Round {
    requests_per_second: f64,
    p99_ms: f64,
    /// This process's (the server's) CPU time per request, user and system, in µs.
    cpu_us: (f64, f64),
}

fn main() {
    let arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let [target, count] = arguments.as_slice() {
        return requests_in_process(target, count.parse().expect("a request count"));
    }
    let seconds = setting("WRK_SECONDS", 3);
    let rounds = setting("WRK_ROUNDS", 10);
    let connections = setting("WRK_CONNECTIONS", 32);
    let workloads = chosen_workloads();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let directory = std::env::temp_dir().join(format!("toolgate-wrk-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let clinic = serve(&runtime, router(&directory.join("clinic.db")));
    let calls = serve(&runtime, calls_router());
    println!("{connections} connections, {seconds} s per round");
    let mut ratios: Vec<Vec<(f64, f64)>> = vec![Vec::new(); workloads.len()];
    for round in 1..=rounds {
        for (workload, ratios) in workloads.iter().zip(&mut ratios) {
            let base = if workload.on_calls_router {
                &calls
            } else {
                &clinic
            };
            let script = directory.join(format!("post-{round}.lua"));
            let settings = (seconds, connections);
            ratios.push(compare(round, workload, base, &script, settings));
        }
    }
    for (workload, ratios) in workloads.iter().zip(ratios) {
        let (throughput, p99): (Vec<f64>, Vec<f64>) = ratios.into_iter().unzip();
        // Three decimals: a median of 0.897 is under 0.9, though it rounds to 0.90.
        println!(
            "median of {rounds} rounds, {}, toolgate / bare: {:.3}× requests per second ({:.2}–{:.2}), {:.3}× p99",
            workload.name,
            median(throughput.clone()),
            least(&throughput),
            most(&throughput),
            median(p99)
        );
    }
    let _ = std::fs::remove_dir_all(directory);
}

/// One round of `workload`: the bare handler and toolgate, one after the other, the one
/// that goes first taking turns from round to round (so that neither is always measured on
/// a machine the other has just warmed, or just left); toolgate's ratios to the bare
/// handler (requests per second, p99).
fn compare(
    round: u64,
    workload: &Workload,
    base: &str,
    script: &std::path::Path,
    (seconds, connections): (u64, u64),
) -> (f64, f64) {
    let targets = [
        ("bare", "bare axum handler"),
        ("toolgate", "toolgate /tools/call"),
    ];
    let measure = |(target, label): (&str, &str)| {
        let (path, body) = workload.request(target);
        let measured = wrk(script, &format!("{base}{path}"), body, seconds, connections);
        print_round(round, workload.name, label, &measured);
        measured
    };
    let (bare, tool) = if round % 2 == 1 {
        let bare = measure(targets[0]);
        (bare, measure(targets[1]))
    } else {
        let tool = measure(targets[1]);
        (measure(targets[0]), tool)
    };
    let ratio = (
        tool.requests_per_second / bare.requests_per_second,
        tool.p99_ms / bare.p99_ms,
    );
    println!(
        "round {round} {}: toolgate / bare {:.2}× requests per second, {:.2}× p99",
        workload.name, ratio.0, ratio.1
    );
    ratio
}

/// The workloads named in `WRK_TOOLS` (comma-separated tool names), or all of them.
fn chosen_workloads() -> Vec<&'static Workload> {
    let Ok(names) = std::env::var("WRK_TOOLS") else {
        return WORKLOADS.iter().collect();
    };
    let chosen: Vec<&Workload> = WORKLOADS
        .iter()
        .filter(|workload| names.split(',').any(|name| name.trim() == workload.name))
        .collect();
    let known: Vec<&str> = WORKLOADS.iter().map(|workload| workload.name).collect();
    assert!(
        !chosen.is_empty(),
        "WRK_TOOLS={names:?} names none of {known:?}"
    );
    chosen
}

fn print_round(round: u64, tool: &str, target: &str, measured: &Round) {
    println!(
        "round {round} {tool:<16} {target:<22} {:>10.0} req/s  p99 {:>6.2} ms  server CPU {:>5.1} µs user + {:>5.1} µs system a request",
        measured.requests_per_second, measured.p99_ms, measured.cpu_us.0, measured.cpu_us.1
    );
}

/// `count` requests of `row` (`tool/target`, the target `bare` or `toolgate`; a target
/// alone is the clinic's tool) from a client in this process, one thread for both: what a profiler
/// (`valgrind --tool=callgrind`) looks at.
fn requests_in_process(row: &str, count: u64) {
    let (name, target) = row.split_once('/').unwrap_or(("get_clinic_hours", row));
    let workload = Workload::named(name).expect("a known tool");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let directory = std::env::temp_dir().join(format!("toolgate-wrk-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let base = serve(&runtime, workload.router(&directory.join("clinic.db")));
    let (path, body) = workload.request(target);
    let url = format!("{base}{path}");
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

fn least(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

fn most(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
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
    let before = cpu_seconds();
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
    let after = cpu_seconds();
    let requests = report
        .lines()
        .find_map(|line| line.trim().split_once(" requests in "))
        .and_then(|(count, _)| count.parse::<f64>().ok())
        .expect("wrk reports its request count");
    let per_request = |(before, after): (f64, f64)| (after - before) * 1e6 / requests;
    Round {
        requests_per_second: field(&report, "Requests/sec:").expect("wrk reports requests/sec"),
        p99_ms: field(&report, "99%").expect("wrk --latency reports the 99th percentile"),
        cpu_us: (
            per_request((before.0, after.0)),
            per_request((before.1, after.1)),
        ),
    }
}

/// This process's CPU time so far, user and system, in seconds (`/proc/self/stat`, in
/// Linux's user clock ticks, 1/100 s by its ABI).
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux's /proc");
    // Fields after the command's name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |index: usize| fields[index].parse::<f64>().expect("a tick count") / 100.0;
    // utime and stime are the 14th and 15th fields; the state (3rd) is fields[0].
    (ticks(11), ticks(12))
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
