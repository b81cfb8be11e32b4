//! Headless Chromium (Debian's package) driven over the DevTools protocol: a page is opened,
//! scripts are evaluated in it, and screenshots are taken, as a person's browser would run
//! the page.
//!
//! The protocol is JSON messages over a WebSocket (tokio-tungstenite): a command
//! `{"id", "method", "params"}` is answered by the message with the same `id`; the other
//! messages are events. The few commands the tests need are here, rather than a generated
//! client of the whole protocol, which would cost the suite minutes of compiling.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a page may take to show what a test waits for. Generous: a test waits for a
/// state, never for a time, so a slow machine only makes it slower.
const PATIENCE: Duration = Duration::from_secs(30);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A headless Chromium with a profile of its own, killed when dropped.
pub struct Chromium {
    _child: Child,
    _profile: TempDir,
    /// `ws://127.0.0.1:PORT/devtools/browser/ID`.
    endpoint: String,
}

/// Where Chromium is: `$CHROMIUM`, else Debian's `/usr/bin/chromium`, installed by
/// tests/browser/setup.sh if it is missing (or waited for, while CI installs it).
async fn executable() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = PathBuf::from("/usr/bin/chromium");
    if !path.exists() {
        let setup = concat!(env!("CARGO_MANIFEST_DIR"), "/../browser/setup.sh");
        let status = Command::new("bash")
            .arg(setup)
            .status()
            .await
            .expect("bash runs tests/browser/setup.sh");
        assert!(
            status.success() && path.exists(),
            "{} is missing and tests/browser/setup.sh could not install it ({status}): \
             install Debian's Chromium (`apt-get install chromium`) or set CHROMIUM to a \
             Chromium binary",
            path.display()
        );
    }
    path
}

impl Chromium {
    /// Starts Chromium headless on a free loopback port.
    pub async fn start() -> Chromium {
        let profile = TempDir::new().expect("a profile folder");
        let mut child = Command::new(executable().await)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                // Without these, Chromium calls home, and this machine's closed network
                // refuses it over and over.
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1280,900",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("Chromium starts");
        let stderr = child.stderr.take().expect("Chromium's stderr");
        let mut lines = BufReader::new(stderr).lines();
        let deadline = Instant::now() + PATIENCE;
        let mut said = Vec::new();
        let endpoint = loop {
            let line = tokio::time::timeout_at(deadline.into(), lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("Chromium did not open its DevTools port: {said:?}"))
                .expect("Chromium's stderr reads")
                .unwrap_or_else(|| panic!("Chromium exited: {said:?}"));
            if let Some(endpoint) = line.strip_prefix("DevTools listening on ") {
                break endpoint.trim().to_owned();
            }
            said.push(line);
        };
        // Chromium keeps writing; a full pipe would stop it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Chromium {
            _child: child,
            _profile: profile,
            endpoint,
        }
    }

    /// A new tab, blank, with its own session storage.
    pub async fn page(&self) -> Page {
        let mut browser = Connection::open(&self.endpoint).await;
        let target = browser
            .command("Target.createTarget", json!({"url": "about:blank"}))
            .await
            .expect("a new tab");
        let id = target["targetId"].as_str().expect("the tab's id");
        let (host, _) = self
            .endpoint
            .strip_prefix("ws://")
            .and_then(|rest| rest.split_once('/'))
            .expect("the endpoint is ws://HOST:PORT/...");
        let mut connection = Connection::open(&format!("ws://{host}/devtools/page/{id}")).await;
        for domain in ["Page.enable", "Runtime.enable"] {
            connection.command(domain, json!({})).await.expect(domain);
        }
        Page { connection }
    }
}

/// One WebSocket to Chromium, with the events that came between answers.
struct Connection {
    socket: Socket,
    next_id: u64,
    /// Uncaught exceptions and console errors of the page, as text.
    problems: Vec<String>,
}

impl Connection {
    async fn open(url: &str) -> Connection {
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .unwrap_or_else(|error| panic!("the DevTools socket {url} opens: {error}"));
        Connection {
            socket,
            next_id: 0,
            problems: Vec::new(),
        }
    }

    /// Sends a command and waits for its answer: the result, or the protocol's error.
    async fn command(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.socket
            .send(Message::text(message))
            .await
            .map_err(|error| format!("{method} could not be sent: {error}"))?;
        let deadline = Instant::now() + PATIENCE;
        loop {
            let message = tokio::time::timeout_at(deadline.into(), self.socket.next())
                .await
                .map_err(|_| format!("{method} had no answer in {PATIENCE:?}"))?
                .ok_or_else(|| format!("the DevTools socket closed during {method}"))?
                .map_err(|error| format!("the DevTools socket failed during {method}: {error}"))?;
            let Message::Text(text) = message else {
                continue;
            };
            let value: Value = serde_json::from_str(&text).map_err(|error| error.to_string())?;
            if value["id"].as_u64() == Some(id) {
                return match value.get("error") {
                    Some(error) => Err(format!("{method}: {error}")),
                    None => Ok(value["result"].clone()),
                };
            }
            self.note_event(&value);
        }
    }

    fn note_event(&mut self, event: &Value) {
        match event["method"].as_str() {
            Some("Runtime.exceptionThrown") => {
                let details = &event["params"]["exceptionDetails"];
                let text = details["exception"]["description"]
                    .as_str()
                    .or_else(|| details["text"].as_str())
                    .unwrap_or("an exception");
                self.problems.push(format!("uncaught: {text}"));
            }
            Some("Runtime.consoleAPICalled") if event["params"]["type"] == "error" => {
                self.problems
                    .push(format!("console.error: {}", event["params"]["args"]));
            }
            _ => {}
        }
    }
}

/// A tab of [`Chromium`].
pub struct Page {
    connection: Connection,
}

impl Page {
    /// Opens `url` and waits until it has loaded.
    pub async fn open(&mut self, url: &str) {
        let answer = self
            .connection
            .command("Page.navigate", json!({"url": url}))
            .await
            .expect("Page.navigate");
        assert!(
            answer.get("errorText").is_none(),
            "{url} did not open: {answer}"
        );
        self.wait_for("document.readyState === 'complete'", "the page loads")
            .await;
    }

    /// The value of a JavaScript expression in the page (promises are awaited), or the
    /// exception it threw.
    pub async fn evaluate(&mut self, expression: &str) -> Result<Value, String> {
        let answer = self
            .connection
            .command(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await?;
        if let Some(exception) = answer.get("exceptionDetails") {
            return Err(format!("{expression} threw: {exception}"));
        }
        Ok(answer["result"]["value"].clone())
    }

    /// [`evaluate`](Self::evaluate), for expressions that must not throw.
    pub async fn eval(&mut self, expression: &str) -> Value {
        self.evaluate(expression)
            .await
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Waits until `expression` is truthy in the page, and returns its value; panics naming
    /// `what` if it never is.
    pub async fn wait_for(&mut self, expression: &str, what: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let value = self.evaluate(expression).await;
            let truthy = match &value {
                Ok(Value::Null | Value::Bool(false)) | Err(_) => false,
                Ok(Value::String(text)) => !text.is_empty(),
                Ok(Value::Number(number)) => number.as_f64() != Some(0.0),
                Ok(_) => true,
            };
            if truthy {
                return value.expect("a truthy value");
            }
            assert!(
                Instant::now() < deadline,
                "waited {PATIENCE:?} for {what} ({expression}), last {value:?}; the page's problems: {:?}",
                self.connection.problems
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A PNG of the whole page.
    pub async fn screenshot(&mut self) -> Vec<u8> {
        // A tab in the background draws no frames to capture.
        self.connection
            .command("Page.bringToFront", json!({}))
            .await
            .expect("Page.bringToFront");
        let answer = self
            .connection
            .command(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await
            .expect("Page.captureScreenshot");
        let data = answer["data"].as_str().expect("the screenshot's data");
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("the screenshot is base64")
    }

    /// Uncaught exceptions and `console.error` messages of the page so far.
    pub fn problems(&self) -> &[String] {
        &self.connection.problems
    }
}
