//! `toolgate serve mcp` seen by the official Python SDK: each token lists what its role
//! allows, stdio serves one role, tool files changed while serving reach a listening
//! client; `toolgate mcp status` on imported servers.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Project, Serving, python, python_script};

const CONFIG: &str = r#"
roles = ["public", "staff", "admin"]
user_tools = false

[callers.pat]
role = "public"
token_env = "PAT_TOKEN"

[callers.ada]
role = "admin"
token_env = "ADA_TOKEN"

[sandbox]
root = "work"
"#;

const TOKENS: [(&str, &str); 2] = [("PAT_TOKEN", "pat-token"), ("ADA_TOKEN", "ada-token")];

fn tool(name: &str, permission: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The tool {name}.\npermission: {permission}\ncommand: {{program: echo, args: [\"{name}\"], output: text}}\n---\n"
    )
}

fn project() -> Project {
    let project = Project::new(CONFIG);
    project.write(".toolgate/tools/hello.md", &tool("hello", "public"));
    project.write(".toolgate/tools/purge.md", &tool("purge", "admin"));
    project
}

fn list_tools(args: &[&str]) -> Value {
    python_script("list_tools.py", args)
}

#[test]
fn each_token_lists_what_its_role_allows() {
    let project = project();
    let server = Serving::start(&project, &["mcp", "--http", "127.0.0.1:0"], &TOKENS);
    let public = list_tools(&["http", &server.url, "pat-token"]);
    assert_eq!(public, json!({"tools": ["hello"], "hello": "hello\n"}));
    let admin = list_tools(&["http", &server.url, "ada-token"]);
    assert_eq!(admin["tools"], json!(["hello", "purge"]));
    let stranger = list_tools(&["http", &server.url, "guess"]);
    assert!(
        stranger["error"]
            .as_str()
            .unwrap()
            .contains("error response"),
        "{stranger}"
    );
    let answer = raw_post(&server.url, "guess");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{answer}"
    );
}

/// A bare `initialize` request with a bearer token; the whole answer.
fn raw_post(url: &str, token: &str) -> String {
    use std::io::{Read, Write};
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn stdio_serves_one_role() {
    let project = project();
    let config = project.path().join("toolgate.toml");
    let binary = env!("CARGO_BIN_EXE_toolgate");
    let config = config.to_str().unwrap();
    let public = list_tools(&[
        "stdio", binary, "--config", config, "serve", "mcp", "--stdio",
    ]);
    assert_eq!(
        public["tools"],
        json!(["hello"]),
        "the lowest role by default"
    );
    let admin = list_tools(&[
        "stdio", binary, "--config", config, "serve", "mcp", "--stdio", "--as", "ada",
    ]);
    assert_eq!(admin["tools"], json!(["hello", "purge"]));
}

#[test]
fn a_tool_file_added_while_serving_reaches_a_listening_client() {
    let project = project();
    let server = Serving::start(&project, &["mcp", "--http", "127.0.0.1:0"], &TOKENS);
    let listen = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/mcp/tests/mcp/listen.py"
    );
    let mut listener = Command::new(python())
        .args([listen, &server.url, "ada-token"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the listener starts");
    let mut lines = BufReader::new(listener.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "listening");

    project.write(".toolgate/tools/fresh.md", &tool("fresh", "public"));
    let report: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let _ = listener.wait();
    assert_eq!(
        report["tools"],
        json!(["fresh", "hello", "purge"]),
        "{report}"
    );

    // A changed file is registered again; a removed one is gone.
    project.write(".toolgate/tools/fresh.md", &tool("fresh", "admin"));
    std::fs::remove_file(project.path().join(".toolgate/tools/purge.md")).unwrap();
    let settled =
        eventually(|| list_tools(&["http", &server.url, "pat-token"])["tools"] == json!(["hello"]));
    assert!(
        settled,
        "the public caller no longer sees `fresh`, nobody sees `purge`"
    );
    assert_eq!(
        list_tools(&["http", &server.url, "ada-token"])["tools"],
        json!(["fresh", "hello"])
    );
}

fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

#[test]
fn mcp_status_reports_each_imported_server() {
    let served = project();
    let config = served.path().join("toolgate.toml");
    let importing = Project::new(&format!(
        "roles = [\"public\", \"staff\"]\nuser_tools = false\n\n[[mcp]]\nname = \"mine\"\ncommand = {binary:?}\nargs = [\"--config\", {config:?}, \"serve\", \"mcp\", \"--stdio\", \"--as\", \"ada\"]\npermission = \"staff\"\n\n[[mcp]]\nname = \"gone\"\ncommand = \"/nonexistent/server\"\npermission = \"staff\"\n",
        binary = env!("CARGO_BIN_EXE_toolgate"),
        config = config.display().to_string(),
    ));
    let status = importing
        .run(&["mcp", "status", "--json"], "")
        .expect(1)
        .json();
    assert_eq!(status[0]["name"], "mine");
    assert_eq!(status[0]["connected"], true, "{status}");
    assert_eq!(status[0]["tools"], 2);
    assert_eq!(status[1]["connected"], false);
    assert!(
        status[1]["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/server"),
        "{status}"
    );
    let listed = importing
        .run(&["tools", "list", "--role", "staff"], "")
        .expect(0)
        .stdout();
    assert!(
        listed.contains("mcp_mine_hello") && listed.contains("mcp_mine_purge"),
        "{listed}"
    );
    let called = importing.run(&["call", "mcp_mine_hello"], "").expect(0);
    assert_eq!(called.stdout().trim(), "hello");
}

#[test]
fn a_mute_server_is_given_up_on_and_every_command_says_so_and_serves_the_rest() {
    let served = project();
    let config = served.path().join("toolgate.toml");
    let importing = Project::new(&format!(
        "roles = [\"public\", \"staff\"]\nuser_tools = false\n\n[[mcp]]\nname = \"mute\"\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 600\"]\npermission = \"staff\"\nconnect_timeout = \"1s\"\n\n[[mcp]]\nname = \"mine\"\ncommand = {binary:?}\nargs = [\"--config\", {config:?}, \"serve\", \"mcp\", \"--stdio\", \"--as\", \"ada\"]\npermission = \"staff\"\n",
        binary = env!("CARGO_BIN_EXE_toolgate"),
        config = config.display().to_string(),
    ));
    let started = Instant::now();
    let listed = importing
        .run(&["tools", "list", "--role", "staff"], "")
        .expect(0);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        listed.stdout().contains("mcp_mine_hello"),
        "{}",
        listed.stdout()
    );
    let said = listed.stderr();
    assert!(
        said.contains("MCP server not imported") && said.contains("`mute`"),
        "{said}"
    );
    assert!(
        said.contains("did not answer within 1.0 s") && said.contains("connect_timeout"),
        "names the deadline and how to change it: {said}"
    );

    let called = importing.run(&["call", "mcp_mine_hello"], "").expect(0);
    assert_eq!(called.stdout().trim(), "hello");
    assert!(called.stderr().contains("`mute`"), "{}", called.stderr());
}

#[test]
fn at_trace_the_command_logs_no_secret() {
    const SECRET: &str = "c0rrect-h0rse-B4ttery";
    let project = project();
    project.write(
        ".toolgate/tools/unlock.md",
        "---\nname: unlock\ndescription: Unlock a door.\npermission: public\nsecret: [code]\nparameters: {door: string, code: string}\ncommand: {program: echo, args: [\"opened\"]}\n---\n",
    );
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "unlock", "arguments": {"door": "front", "code": SECRET}}}),
    ]
    .map(|message| message.to_string() + "\n")
    .concat();
    let mut serve = project.command();
    serve
        .args(["serve", "mcp", "--stdio"])
        .env("RUST_LOG", "trace");
    let ran = project.run_with(&mut serve, &messages);
    let (answers, log) = (ran.stdout(), ran.stderr());
    assert!(
        answers.contains("opened"),
        "the call ran: {answers} {log:.2000}"
    );
    assert!(log.contains("TRACE"), "the log was at TRACE: {log:.2000}");
    for (place, text) in [("the answers", &answers), ("the log", &log)] {
        assert!(!text.contains(SECRET), "the secret is in {place}");
    }
}
