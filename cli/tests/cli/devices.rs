//! Devices as real processes on loopback: a hub (`toolgate serve http` with
//! `[devices.*]`) and two devices (`toolgate device --hub`), each its own project with
//! its own sandbox and tools. Calls reach the right device; a device killed mid-call ends
//! the call with an audited error and works again once it reconnects; a tool the hub did
//! not accept is not offered; a device token opens nothing but the link; a revoked token is
//! refused at the next connect; a risky call waits for approval at the hub.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Project, Serving};

const LAPTOP_TOKEN: &str = "laptop-token-5f0c2a9b7e";
const HOMELAB_TOKEN: &str = "homelab-token-81d3e6c4aa";
/// `printf %s homelab-token-81d3e6c4aa | sha256sum`
const HOMELAB_SHA256: &str = "fc16181f7343c29b190f7beb6bbb955f041ff0ef471cb55fcdb41aa4e6d00e31";

fn hub_config() -> String {
    format!(
        r#"
roles = ["public", "staff", "admin"]
audit_file = "audit.jsonl"

[callers.ada]
role = "staff"
token_env = "ADA_TOKEN"

[callers.root]
role = "admin"
token_env = "ROOT_TOKEN"

[devices.laptop]
token_env = "LAPTOP_TOKEN"
permission = "staff"
tools = ["create_directory", "list_directory", "delete_directory", "slow"]
read_only = ["list_directory"]
approve = ["delete_directory"]
allow = {{ path = ["Test*", "Projects/**", "."] }}

[devices.homelab]
token_sha256 = "{HOMELAB_SHA256}"
permission = "staff"
tools = ["create_directory"]
"#
    )
}

/// A device's own project: its files tools in its sandbox, a slow command tool, and one
/// (`format_disk`) no hub accepts.
/// Its policy is `auto`: the hub asks a person for the calls that need one (a device whose
/// own policy asks too would make such calls wait for its own approver as well).
const DEVICE_CONFIG: &str = r#"
roles = ["owner"]
audit_file = "audit.jsonl"
policy = "auto"

[sandbox]
root = "work"

[ready.files]
permission = "owner"
"#;

const SLOW_TOOL: &str = r#"---
name: slow
description: Takes half a minute.
permission: owner
command:
  program: sleep
  args: ["30"]
---
Waits.
"#;

const FORMAT_TOOL: &str = r#"---
name: format_disk
description: Formats the disk.
permission: owner
command:
  program: "true"
---
Would format.
"#;

fn device_project() -> Project {
    let project = Project::new(DEVICE_CONFIG);
    project.write(".toolgate/tools/slow.md", SLOW_TOOL);
    project.write(".toolgate/tools/format_disk.md", FORMAT_TOOL);
    project
}

/// `toolgate device --hub <hub>` in `project`, with its token in `DEVICE_TOKEN`.
fn device(project: &Project, hub: &str, token: &str) -> Child {
    project
        .command()
        .args(["device", "--hub", hub, "--token-env", "DEVICE_TOKEN"])
        .env("DEVICE_TOKEN", token)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate device starts")
}

struct Hub {
    serving: Option<Serving>,
    /// What `serve` said before it listened.
    said: String,
    project: Project,
    url: String,
    client: reqwest::Client,
}

impl Hub {
    const ENVS: [(&str, &str); 3] = [
        ("ADA_TOKEN", "ada-token"),
        ("ROOT_TOKEN", "root-token"),
        ("LAPTOP_TOKEN", LAPTOP_TOKEN),
    ];

    fn start() -> Hub {
        let project = Project::new(&hub_config());
        let serving = Serving::start(&project, &["http", "127.0.0.1:0"], &Self::ENVS);
        Hub {
            url: serving.url.clone(),
            said: serving.said.clone(),
            serving: Some(serving),
            project,
            client: reqwest::Client::new(),
        }
    }

    /// Stops the hub's process and starts another at the same address.
    fn restart(&mut self) {
        drop(self.serving.take());
        let address = self.url.trim_start_matches("http://").to_owned();
        self.serving = Some(Serving::start(
            &self.project,
            &["http", &address],
            &Self::ENVS,
        ));
    }

    async fn get(&self, route: &str, token: &str) -> (u16, Value) {
        let answer = self
            .client
            .get(format!("{}/{route}", self.url))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap_or_default())
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.post(
            "tools/call",
            "ada-token",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// Calls `tool` with `path`, as ada; it must succeed.
    async fn make(&self, tool: &str, path: &str) {
        let made = self.call(tool, json!({"path": path})).await;
        assert!(made.get("error").is_none(), "{tool}: {made}");
    }

    async fn post(&self, route: &str, token: &str, body: Value) -> Value {
        self.client
            .post(format!("{}/{route}", self.url))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Waits until `GET /devices` says `device` is `online`.
    async fn until(&self, device: &str, online: bool) {
        let start = Instant::now();
        loop {
            let (_, devices) = self.get("devices", "ada-token").await;
            let found = devices
                .as_array()
                .into_iter()
                .flatten()
                .find(|d| d["id"] == device);
            if found.is_some_and(|d| d["online"] == online) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{device} online={online}: {devices}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn tool_names(&self) -> Vec<String> {
        let (_, tools) = self.get("tools", "ada-token").await;
        let tools = tools["tools"]
            .as_array()
            .or(tools.as_array())
            .cloned()
            .unwrap_or_default();
        tools
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hub_routes_calls_to_two_device_processes_and_survives_them_leaving() {
    let hub = Hub::start();
    assert!(
        hub.said.contains("/devices/connect (2 configured"),
        "{}",
        hub.said
    );
    let (laptop, homelab) = (device_project(), device_project());
    let laptop_process = device(&laptop, &hub.url, LAPTOP_TOKEN);
    let homelab_process = device(&homelab, &hub.url, HOMELAB_TOKEN);
    hub.until("laptop", true).await;
    hub.until("homelab", true).await;

    // Routed to the device named, only.
    hub.make("laptop__create_directory", "Test").await;
    assert!(laptop.path().join("work/Test").is_dir());
    assert!(!homelab.path().join("work/Test").exists());
    hub.make("homelab__create_directory", "Elsewhere").await;
    assert!(homelab.path().join("work/Elsewhere").is_dir());
    assert!(!laptop.path().join("work/Elsewhere").exists());

    // What the hub did not accept is not offered; values it does not allow are refused.
    let names = hub.tool_names().await;
    assert!(names.contains(&"laptop__slow".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|name| name.contains("format_disk")),
        "{names:?}"
    );
    let refused = hub
        .call("laptop__create_directory", json!({"path": "../escape"}))
        .await;
    assert_eq!(refused["error"]["code"], "denied", "{refused}");

    // A device's token opens its link only.
    let (status, _) = hub.get("tools", LAPTOP_TOKEN).await;
    assert_eq!(status, 401);

    // A risky call waits for approval at the hub; approved, it runs on the device.
    let waiting = hub
        .call("laptop__delete_directory", json!({"path": "Test"}))
        .await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
    assert!(laptop.path().join("work/Test").is_dir());
    let ticket = waiting["error"]["details"]["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let approved = hub
        .post("approvals/approve", "root-token", json!({"ticket": ticket}))
        .await;
    assert!(
        approved.get("error").is_none() || approved["error"].is_null(),
        "{approved}"
    );
    assert!(!laptop.path().join("work/Test").exists());

    // Killed mid-call: the call ends with a clear error, and is audited.
    let slow = {
        let (client, url) = (hub.client.clone(), hub.url.clone());
        tokio::spawn(async move {
            let body = json!({"name": "laptop__slow", "arguments": {}});
            let answer = client
                .post(format!("{url}/tools/call"))
                .bearer_auth("ada-token")
                .json(&body)
                .send();
            answer.await.unwrap().json::<Value>().await.unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(700)).await;
    let killed_at = Instant::now();
    stop(laptop_process);
    let ended = tokio::time::timeout(Duration::from_secs(15), slow)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ended["error"]["code"], "device_disconnected", "{ended}");
    assert!(killed_at.elapsed() < Duration::from_secs(15));
    hub.until("laptop", false).await;
    let trail = std::fs::read_to_string(hub.project.path().join("audit.jsonl")).unwrap();
    let slow_record = trail
        .lines()
        .find(|line| line.contains("\"laptop__slow\"") && line.contains("device_disconnected"));
    assert!(slow_record.is_some(), "{trail}");

    // Offline: out of the list, and a call fails at once.
    assert!(
        !hub.tool_names()
            .await
            .iter()
            .any(|name| name.starts_with("laptop__"))
    );
    let offline = hub
        .call("laptop__create_directory", json!({"path": "Test2"}))
        .await;
    assert_eq!(offline["error"]["code"], "device_offline", "{offline}");

    // It reconnects, and works again. (Logging everything: its token is not in the log.)
    let laptop_again = laptop
        .command()
        .args(["device", "--hub", &hub.url, "--token-env", "DEVICE_TOKEN"])
        .env("DEVICE_TOKEN", LAPTOP_TOKEN)
        .env("RUST_LOG", "trace")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    hub.until("laptop", true).await;
    hub.make("laptop__create_directory", "Test2").await;
    assert!(laptop.path().join("work/Test2").is_dir());

    // `toolgate devices` shows both (a table, or JSON); revoking one closes its link, and
    // the device, refused at its next connect, stops with the reason.
    let table = hub.project.run_with(
        hub.project
            .command()
            .args([
                "devices",
                "list",
                "--hub",
                &hub.url,
                "--token-env",
                "ROOT_TOKEN",
            ])
            .env("ROOT_TOKEN", "root-token"),
        "",
    );
    let table = table.expect(0).stdout();
    assert!(
        table.contains("laptop") && table.contains("online") && table.contains("homelab"),
        "{table}"
    );
    let listed = hub.project.run_with(
        hub.project
            .command()
            .args([
                "devices",
                "--hub",
                &hub.url,
                "--token-env",
                "ROOT_TOKEN",
                "--json",
            ])
            .env("ROOT_TOKEN", "root-token"),
        "",
    );
    let listed = listed.expect(0).json();
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    let revoked = hub.project.run_with(
        hub.project
            .command()
            .args([
                "devices",
                "revoke",
                "homelab",
                "--hub",
                &hub.url,
                "--token-env",
                "ROOT_TOKEN",
            ])
            .env("ROOT_TOKEN", "root-token"),
        "",
    );
    revoked.expect(0);
    let homelab_ended =
        tokio::task::spawn_blocking(move || homelab_process.wait_with_output().unwrap())
            .await
            .unwrap();
    assert_eq!(homelab_ended.status.code(), Some(1));
    let said = String::from_utf8_lossy(&homelab_ended.stderr);
    assert!(said.contains("refused the device"), "{said}");
    let refused = hub
        .call("homelab__create_directory", json!({"path": "X"}))
        .await;
    assert_eq!(refused["error"]["code"], "device_offline", "{refused}");
    let mut laptop_again = laptop_again;
    let _ = laptop_again.kill();
    let log = laptop_again.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&log.stderr);
    assert!(log.contains("TRACE"), "logging at TRACE: {log}");
    assert!(
        !log.contains(LAPTOP_TOKEN),
        "the token is in the device's log"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_device_connects_again_by_itself_when_the_hub_comes_back() {
    let mut hub = Hub::start();
    let laptop = device_project();
    let laptop_process = device(&laptop, &hub.url, LAPTOP_TOKEN);
    hub.until("laptop", true).await;

    // The hub stops, and starts again at the same address: the device finds it by itself.
    hub.restart();
    hub.until("laptop", true).await;
    hub.make("laptop__create_directory", "Test-again").await;
    assert!(laptop.path().join("work/Test-again").is_dir());
    stop(laptop_process);
}

#[test]
fn a_new_device_token_comes_with_the_line_for_the_hubs_config() {
    let project = Project::new("roles = [\"public\"]\n");
    let said = project.run(&["devices", "token"], "").expect(0).stdout();
    let token = said
        .lines()
        .next()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(token.len(), 64, "{said}");
    let digest = said
        .lines()
        .nth(1)
        .unwrap()
        .rsplit('"')
        .nth(1)
        .unwrap()
        .to_owned();
    use sha2::Digest;
    let expected: String = sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, expected, "{said}");
    // Without a hub to ask, `devices` says what to give.
    let ran = project.run(&["devices"], "").expect(2);
    assert!(
        ran.stderr().contains("--hub <URL> --token-env <VARIABLE>"),
        "{}",
        ran.stderr()
    );
}
