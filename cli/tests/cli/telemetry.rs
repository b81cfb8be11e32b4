//! `[telemetry]` across processes, read back from a real backend (Arize Phoenix on
//! 127.0.0.1): the official Python MCP SDK calls `toolgate serve mcp` with a `traceparent`
//! in `_meta` (on both protocol revisions), and the call is forwarded to an imported MCP
//! server, another `toolgate` process: one trace, the imported server's spans children of
//! the gateway's call. Mistakes in `[telemetry]` name their line.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolgate_test_support::Phoenix;

use crate::support::{Project, Serving, python_script};

fn server_config(phoenix: &Phoenix, service: &str) -> String {
    format!(
        "roles = [\"public\", \"staff\"]\nuser_tools = false\n\n[callers.ada]\nrole = \"staff\"\ntoken_env = \"ADA_TOKEN\"\n\n[sandbox]\nroot = \"work\"\n\n[telemetry]\nendpoint = \"{}\"\nservice_name = \"{service}\"\n",
        phoenix.url
    )
}

const HELLO: &str = "---\nname: hello\ndescription: Says hello.\npermission: public\ncommand: {program: echo, args: [\"hello\"], output: text}\n---\n";

/// The Python SDK's call of `tool`, with `traceparent` in `_meta`.
fn traced_call(url: &str, mode: &str, traceparent: &str, tool: &str) -> Value {
    python_script(
        "traced_call.py",
        &[url, "ada-token", mode, traceparent, tool],
    )
}

/// The spans of `trace` in Phoenix, once every name in `expected` is among them.
fn trace_spans(phoenix: &Phoenix, trace: &str, expected: &[&str]) -> Vec<Value> {
    let url = format!("{}/v1/projects/default/spans?limit=1000", phoenix.url);
    let started = Instant::now();
    let client = reqwest::blocking_client();
    loop {
        let spans: Vec<Value> = client(&url)
            .and_then(|body| body["data"].as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter(|span| span["context"]["trace_id"] == trace)
            .collect();
        let names: Vec<&str> = spans
            .iter()
            .filter_map(|span| span["name"].as_str())
            .collect();
        if expected.iter().all(|name| names.contains(name)) {
            return spans;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "trace {trace} has {names:?}, not all of {expected:?}\n{}",
            phoenix.log()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Reads JSON over HTTP with the async client on a runtime of its own.
mod reqwest {
    pub fn blocking_client() -> impl Fn(&str) -> Option<serde_json::Value> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        move |url: &str| {
            runtime.block_on(async {
                let response = ::reqwest::get(url).await.ok()?;
                response.json().await.ok()
            })
        }
    }
}

fn named<'a>(spans: &'a [Value], name: &str, service_child_of: Option<&Value>) -> &'a Value {
    spans
        .iter()
        .find(|span| {
            span["name"] == name
                && service_child_of.is_none_or(|parent| &span["parent_id"] == parent)
        })
        .unwrap_or_else(|| panic!("no span `{name}` in {spans:#?}"))
}

#[test]
fn one_trace_crosses_the_mcp_client_the_gateway_and_an_imported_server() {
    let phoenix = Phoenix::start(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let imported = Project::new(&server_config(&phoenix, "tools-b"));
    imported.write(".toolgate/tools/hello.md", HELLO);
    let gateway = Project::new(&format!(
        "{}\n[[mcp]]\nname = \"b\"\ncommand = {:?}\nargs = [\"--config\", {:?}, \"serve\", \"mcp\", \"--stdio\", \"--as\", \"ada\"]\npermission = \"public\"\n",
        server_config(&phoenix, "gateway-a"),
        env!("CARGO_BIN_EXE_toolgate"),
        imported.path().join("toolgate.toml").display().to_string(),
    ));
    let tool = imported_tool_name(&gateway);
    let serving = Serving::start(
        &gateway,
        &["mcp", "--http", "127.0.0.1:0"],
        &[("ADA_TOKEN", "ada-token")],
    );
    for (mode, trace) in [
        ("legacy", "5b8efff798038103d269b633813fc60c"),
        ("2026-07-28", "6e0c63257de34c926f9efcd03927272e"),
    ] {
        let client_span = "eee19b7ec3c1b174";
        let traceparent = format!("00-{trace}-{client_span}-01");
        let answer = traced_call(&serving.url, mode, &traceparent, &tool);
        assert_eq!(answer["is_error"], false, "{mode}: {answer}");

        let gateway_call = format!("execute_tool {tool}");
        let spans = trace_spans(
            &phoenix,
            trace,
            &[
                &format!("tools/call {tool}"),
                &gateway_call,
                "tools/call hello",
                "execute_tool hello",
            ],
        );
        // The gateway's MCP span is the client's child: its context came in `_meta`.
        let mcp = named(&spans, &format!("tools/call {tool}"), None);
        assert_eq!(mcp["parent_id"], client_span, "{mode}");
        assert_eq!(mcp["attributes"]["mcp.method.name"], "tools/call");
        assert_eq!(mcp["attributes"]["network.transport"], "tcp");
        assert!(
            mcp["attributes"]["mcp.session.id"].is_string() || mode != "legacy",
            "{mcp:#}"
        );
        let call = named(&spans, &gateway_call, Some(&mcp["context"]["span_id"]));
        assert_eq!(call["attributes"]["toolgate.front"], "mcp");
        // The imported server, another process: its spans are children of the gateway's call.
        let forwarded = named(
            &spans,
            "tools/call hello",
            Some(&call["context"]["span_id"]),
        );
        assert_eq!(forwarded["attributes"]["network.transport"], "pipe");
        let ran = named(
            &spans,
            "execute_tool hello",
            Some(&forwarded["context"]["span_id"]),
        );
        assert_eq!(ran["attributes"]["toolgate.decision"], "allow");
    }
}

/// The name the gateway gives the imported `hello`.
fn imported_tool_name(gateway: &Project) -> String {
    let listed = gateway
        .run(&["tools", "list", "--role", "public", "--json"], "")
        .expect(0);
    let names: Vec<String> = listed
        .json()
        .as_array()
        .expect("a list of tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    names
        .into_iter()
        .find(|name| name.contains("hello"))
        .expect("the imported hello is listed")
}

#[test]
fn telemetry_mistakes_name_the_line_and_the_fix() {
    let project = Project::new(
        "roles = [\"public\"]\nuser_tools = false\n\n[telemetry]\nendpoint = \"localhost:4318\"\n",
    );
    let failed = project.run(&["tools", "list"], "").expect(2);
    let said = failed.stderr();
    assert!(said.contains("toolgate.toml:5"), "{said}");
    assert!(said.contains("http://127.0.0.1:4318"), "{said}");
    let project = Project::new(
        "roles = [\"public\"]\nuser_tools = false\n\n[telemetry]\nprotocol = \"http/json\"\n",
    );
    let said = project.run(&["tools", "list"], "").expect(2).stderr();
    assert!(
        said.contains("toolgate.toml:5") && said.contains("\"grpc\""),
        "{said}"
    );
    let project =
        Project::new("roles = [\"public\"]\nuser_tools = false\n\n[telemetry]\nendpont = \"x\"\n");
    let said = project.run(&["tools", "list"], "").expect(2).stderr();
    assert!(
        said.contains("toolgate.toml:5") && said.contains("endpont"),
        "{said}"
    );
}
