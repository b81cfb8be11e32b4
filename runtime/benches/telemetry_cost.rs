//! What telemetry costs a call of `add` through the registry, counted by valgrind's
//! callgrind (instructions, every thread of the process: the batch exporter's included) and
//! timed (ns per call, on this machine): without telemetry, with spans made and dropped (an
//! exporter that keeps nothing), and with spans batched and sent over OTLP/HTTP to a sink in
//! another process (which is not counted).
//!
//! `cargo bench -p toolgate --features otel,mcp --bench telemetry_cost` (needs `valgrind`)

#[path = "common/callgrind.rs"]
mod callgrind;
mod common;

use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use common::{ADD, call_to};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use toolgate::prelude::*;
use toolgate::telemetry::{OtlpProtocol, OtlpSettings, Telemetry};

const ROWS: [&str; 3] = ["off", "dropped", "otlp_batched"];
const CALLS: u64 = 2_000;
const TIMED_CALLS: u64 = 20_000;

/// Keeps nothing: what making the spans costs, without sending them.
#[derive(Debug)]
struct Dropping;

impl SpanExporter for Dropping {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        drop(black_box(batch));
        Ok(())
    }
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    match arguments.first().map(String::as_str) {
        Some("sink") => return sink(),
        Some("timed") => return run(&arguments[1], TIMED_CALLS, true),
        _ => {}
    }
    match callgrind::counted_run() {
        Some((row, count)) => run(&row, count, false),
        None => report(),
    }
}

fn report() {
    let program = std::env::current_exe().expect("the bench's own path");
    println!(
        "{:<14} {:>18} {:>12}",
        "row", "instructions/call", "ns/call"
    );
    let mut off = 0;
    for row in ROWS {
        let per_call = callgrind::per_call(&program, row, CALLS);
        let timed = Command::new(&program)
            .args(["timed", row])
            .output()
            .expect("the timed run");
        let nanos = String::from_utf8_lossy(&timed.stdout).trim().to_owned();
        if row == "off" {
            off = per_call;
        }
        let over = per_call.saturating_sub(off);
        println!("{row:<14} {per_call:>18} {nanos:>12} (+{over} instructions over off)");
    }
}

/// Makes `count` calls of `row` on a single-threaded runtime; `timed`, prints ns per call.
fn run(row: &str, count: u64, timed: bool) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut sink = None;
    let telemetry = match row {
        "off" => None,
        "dropped" => {
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(Dropping)
                .build();
            Some(Telemetry::builder().tracer_provider(&provider).build())
        }
        "otlp_batched" => {
            let (child, url) = start_sink();
            sink = Some(child);
            let mut settings = OtlpSettings::default();
            settings.endpoint = Some(url);
            settings.protocol = Some(OtlpProtocol::HttpProtobuf);
            Some(Telemetry::otlp(&settings).expect("the exporter"))
        }
        other => panic!("no row `{other}`; the rows are {ROWS:?}"),
    };
    let mut builder = Registry::builder().roles(["public"]);
    if let Some(telemetry) = &telemetry {
        builder = builder.telemetry(telemetry.clone());
    }
    let registry = builder.build().unwrap();
    let caller = Caller::new("bench", "public");
    runtime.block_on(async {
        callgrind::counting_starts();
        let started = Instant::now();
        for _ in 0..count {
            let outcome = registry.call(&caller, call_to("add", black_box(ADD))).await;
            drop(black_box(outcome.result.unwrap()));
        }
        if timed {
            println!("{}", started.elapsed().as_nanos() / u128::from(count));
        }
    });
    // What is still batched is sent: every span made is counted.
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    if let Some(mut sink) = sink {
        let _ = sink.kill();
        let _ = sink.wait();
    }
}

/// Starts this bench as an OTLP sink in a process of its own; its URL.
fn start_sink() -> (Child, String) {
    let program = std::env::current_exe().expect("the bench's own path");
    let mut child = Command::new(program)
        .arg("sink")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the sink starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .expect("the sink says its port");
    (child, format!("http://{}", line.trim()))
}

/// Answers every HTTP request with `200` and an empty protobuf body, reading what was sent.
fn sink() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    println!("{}", listener.local_addr().unwrap());
    std::io::stdout().flush().unwrap();
    for stream in listener.incoming().flatten() {
        std::thread::spawn(move || answer(stream));
    }
}

fn answer(mut stream: std::net::TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let reply =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if stream.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}
