//! `open_app` / `close_app`: only the allowlist, only allowed arguments, closing only what
//! was opened.

use serde_json::json;
use toolgate::{Caller, Risk};
use toolgate_tools::apps::{App, AppsConfig, close_app_tool, open_app_tool};

use crate::{Tools, code};

fn tools() -> Tools {
    let config = AppsConfig::new()
        .app(
            "timer",
            App::new("sleep").allow_args(["[0-9]", "[0-9][0-9]"]),
        )
        .app(
            "viewer",
            App::new("sleep").fixed_args(["30"]).needs_display(),
        )
        .app("missing", App::new("no-such-program-here"));
    Tools::new(
        vec![
            open_app_tool().permission("user"),
            close_app_tool().permission("user"),
        ],
        |builder| builder.state(config),
    )
}

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

#[tokio::test]
async fn an_allowed_app_opens_and_closes() {
    let tools = tools();
    let opened = tools
        .call("open_app", json!({"app": "timer", "args": ["30"]}))
        .await
        .unwrap();
    let pid = opened["pid"].as_u64().unwrap();
    assert!(alive(pid));
    let second = tools
        .call("open_app", json!({"app": "timer", "args": ["31"]}))
        .await
        .unwrap();
    assert_eq!(second["running_instances"], 2);
    let closed = tools
        .call("close_app", json!({"app": "timer"}))
        .await
        .unwrap();
    assert_eq!(closed["pids"].as_array().unwrap().len(), 2);
    assert!(!alive(pid), "the process is gone");
    assert_eq!(
        code(tools.call("close_app", json!({"app": "timer"})).await),
        "not_running"
    );
}

#[tokio::test]
async fn the_allowlist_and_the_platform_are_respected() {
    let tools = tools();
    let refused = tools
        .call("open_app", json!({"app": "rm", "args": ["-rf", "/"]}))
        .await
        .unwrap_err();
    assert_eq!(refused.code.as_str(), "app_not_whitelisted");
    assert!(
        refused.message.contains("missing, timer, viewer"),
        "{}",
        refused.message
    );
    assert_eq!(
        code(
            tools
                .call("open_app", json!({"app": "timer", "args": ["100"]}))
                .await
        ),
        "argument_not_allowed"
    );
    assert_eq!(
        code(
            tools
                .call("open_app", json!({"app": "timer", "args": ["--help"]}))
                .await
        ),
        "argument_not_allowed"
    );
    assert_eq!(
        code(tools.call("open_app", json!({"app": "missing"})).await),
        "not_supported"
    );
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        let no_display = tools
            .call("open_app", json!({"app": "viewer"}))
            .await
            .unwrap_err();
        assert_eq!(no_display.code.as_str(), "not_supported");
        assert!(no_display.message.contains("needs a display"));
    }
    assert_eq!(
        code(tools.call("close_app", json!({"app": "rm"})).await),
        "app_not_whitelisted"
    );
    let close = tools.definition("close_app");
    assert_eq!(close.risk, Risk::High);
    assert!(close.hints.destructive);
}

#[tokio::test]
async fn a_file_pattern_lets_no_option_through() {
    let config = AppsConfig::new().app(
        "editor",
        App::new("true").allow_args(["*.txt", "--new-window"]),
    );
    let tools = Tools::new(vec![open_app_tool().permission("user")], |builder| {
        builder.state(config)
    });
    for sneaked in ["--output=/x.txt", "-o.txt", "--config=evil.txt", "-.txt"] {
        let refused = tools
            .call("open_app", json!({"app": "editor", "args": [sneaked]}))
            .await;
        assert_eq!(code(refused), "argument_not_allowed", "{sneaked}");
    }
    let opened = tools
        .call(
            "open_app",
            json!({"app": "editor", "args": ["--new-window", "notes.txt"]}),
        )
        .await;
    assert!(opened.is_ok(), "{opened:?}");
}

#[tokio::test]
async fn a_caller_closes_only_what_it_opened() {
    let tools = tools();
    let ann = Caller::new("ann", "user");
    let bob = Caller::new("bob", "user");
    let opened = tools
        .call_as(&ann, "open_app", json!({"app": "timer", "args": ["30"]}))
        .await
        .unwrap();
    let pid = opened["pid"].as_u64().unwrap();
    let theirs = tools
        .call_as(&bob, "close_app", json!({"app": "timer"}))
        .await;
    assert_eq!(code(theirs), "not_running");
    assert!(alive(pid), "bob cannot close ann's timer");
    let closed = tools
        .call_as(&ann, "close_app", json!({"app": "timer"}))
        .await
        .unwrap();
    assert_eq!(closed["pids"], json!([pid]));
    assert!(!alive(pid));
}
