//! The device's end: one outbound WebSocket to the hub, over which the hub speaks MCP to the
//! device's own registry (the device opened the link; the hub asks the questions), opened
//! again with backoff whenever it drops.

use std::time::Duration;

use rmcp::model::{PingRequest, ServerRequest};
use rmcp::{RoleServer, ServiceExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, header};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::frames::{self, Frames, MAX_FRAME};
use crate::adapters::mcp::McpServer;
use crate::caller::Caller;
use crate::registry::Registry;

/// How often the device pings the hub over an open link (which keeps a home router's
/// mapping open, and tells both ends that the other is there).
pub(super) const PING_EVERY: Duration = Duration::from_secs(20);

/// How long opening a link may take: the connection, the WebSocket's handshake, then the
/// hub's MCP handshake, each.
const OPENING: Duration = Duration::from_secs(15);

/// A link open this long counts as having worked: the backoff after it starts afresh.
const LASTED: Duration = Duration::from_secs(10);

/// How long a ping may go unanswered before the link is taken for dead.
const PING_ANSWER: Duration = Duration::from_secs(10);

/// A device's link to its hub: the device's own registry served, as `caller`, over one
/// outbound WebSocket. The hub only reaches the tools it accepts of the device, and every
/// call it routes is checked again here: the device registry's roles, sandbox and policy.
///
/// ```no_run
/// # async fn demo(registry: toolgate::Registry) {
/// use toolgate::Caller;
/// use toolgate::devices::DeviceLink;
///
/// let token = std::env::var("DEVICE_TOKEN").unwrap();
/// let link = DeviceLink::new("https://hub.example.com", token, registry, Caller::new("hub", "owner"));
/// let refused = link.run().await; // reconnects until the hub refuses the token
/// eprintln!("{refused}");
/// # }
/// ```
pub struct DeviceLink {
    hub: String,
    token: String,
    registry: Registry,
    caller: Caller,
    backoff: (Duration, Duration),
    plain_text_anywhere: bool,
}

/// Why a device link stopped for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceLinkError {
    /// What went wrong, and what to do.
    pub message: String,
}

impl std::fmt::Display for DeviceLinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeviceLinkError {}

/// How one attempt ended.
enum Ended {
    /// The link was open and closed: connect again.
    Closed,
    /// It could not be opened now: wait, then try again.
    Failed(String),
    /// It will not be opened: stop.
    Refused(DeviceLinkError),
}

impl DeviceLink {
    /// A link to the hub at `hub` (`https://…`, or `http://…` on a loopback address; the
    /// route `/devices/connect` is added), presenting `token`, serving `registry` as
    /// `caller`.
    pub fn new(
        hub: impl Into<String>,
        token: impl Into<String>,
        registry: Registry,
        caller: Caller,
    ) -> Self {
        DeviceLink {
            hub: hub.into(),
            token: token.into(),
            registry,
            caller,
            backoff: (Duration::from_millis(500), Duration::from_secs(30)),
            plain_text_anywhere: false,
        }
    }

    /// The wait after a failed attempt: `first`, doubled at each failure up to `most`
    /// (default 0.5 s to 30 s), with up to a quarter more at random, so that devices that
    /// lost the hub together do not come back together.
    pub fn backoff(mut self, first: Duration, most: Duration) -> Self {
        self.backoff = (first, most.max(first));
        self
    }

    /// Lets the link go unencrypted (`http://`) to a hub that is not on a loopback address,
    /// which sends the token in clear: for a network that is private end to end only.
    pub fn allow_plain_text(mut self) -> Self {
        self.plain_text_anywhere = true;
        self
    }

    /// Keeps the link open: connects, serves until the link drops, and connects again
    /// after a backoff (which grows while links fail or close soon after opening). Returns
    /// only when the hub refuses the token (it was revoked, or is wrong) or the hub's
    /// address cannot be used.
    pub async fn run(self) -> DeviceLinkError {
        let mut wait = self.backoff.0;
        loop {
            let opened = std::time::Instant::now();
            match self.once().await {
                Ended::Closed => {
                    // A link that lasted starts the backoff afresh; one the hub closed at
                    // once is not opened again at once.
                    if opened.elapsed() >= LASTED {
                        wait = self.backoff.0;
                    }
                    tokio::time::sleep(jittered(wait)).await;
                    wait = (wait * 2).min(self.backoff.1);
                }
                Ended::Refused(error) => return error,
                Ended::Failed(why) => {
                    tracing::warn!(
                        hub = self.hub,
                        why,
                        "the hub could not be reached; trying again in {:.1} s",
                        wait.as_secs_f64()
                    );
                    tokio::time::sleep(jittered(wait)).await;
                    wait = (wait * 2).min(self.backoff.1);
                }
            }
        }
    }

    /// One link, from connecting to its end.
    async fn once(&self) -> Ended {
        let socket = match self.open().await {
            Ok(socket) => socket,
            Err(ended) => return ended,
        };
        tracing::info!(hub = self.hub, "device link open");
        let transport = frames::transport::<RoleServer, _, _, _>(
            ("device", socket),
            Frames {
                text: text_of,
                frame: frame_of,
            },
            |_| true,
            || {},
        );
        let server = McpServer::for_caller(self.registry.clone(), self.caller.clone());
        let service = match tokio::time::timeout(OPENING, server.serve(transport)).await {
            Ok(Ok(service)) => service,
            Ok(Err(error)) => {
                return Ended::Failed(format!("the hub's MCP handshake failed: {error}"));
            }
            Err(_) => return Ended::Failed("the hub did not begin the MCP handshake".into()),
        };
        let peer = service.peer().clone();
        let stop = service.cancellation_token();
        let waiting = service.waiting();
        tokio::pin!(waiting);
        tokio::select! {
            _ = &mut waiting => {}
            () = unanswered_ping(&peer) => {
                tracing::warn!(hub = self.hub, "the hub stopped answering; connecting again");
                stop.cancel();
            }
        }
        tracing::info!(hub = self.hub, "device link closed");
        Ended::Closed
    }

    /// Opens the WebSocket, presenting the token.
    async fn open(
        &self,
    ) -> Result<
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
        Ended,
    > {
        let url = connect_url(&self.hub, self.plain_text_anywhere).map_err(Ended::Refused)?;
        let mut request = url.as_str().into_client_request().map_err(|error| {
            Ended::Refused(refused(format!(
                "the hub address `{}` cannot be used: {error}",
                self.hub
            )))
        })?;
        let bearer = HeaderValue::from_str(&format!("Bearer {}", self.token)).map_err(|_| {
            Ended::Refused(refused(
                "the device token has characters a header cannot carry".into(),
            ))
        })?;
        request.headers_mut().insert(header::AUTHORIZATION, bearer);
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_FRAME))
            .max_frame_size(Some(MAX_FRAME));
        let connecting = tokio_tungstenite::connect_async_with_config(request, Some(config), true);
        let Ok(connected) = tokio::time::timeout(OPENING, connecting).await else {
            return Err(Ended::Failed(format!(
                "no answer within {} s",
                OPENING.as_secs()
            )));
        };
        match connected {
            Ok((socket, _)) => Ok(socket),
            Err(WsError::Http(response)) => Err(Self::answered(&response)),
            Err(error) => Err(Ended::Failed(error.to_string())),
        }
    }
}

impl DeviceLink {
    /// What an HTTP answer instead of a WebSocket means: the token refused (stop), no device
    /// route at that address (stop: the address or the hub's setup is wrong), or the hub
    /// busy or failing (try again).
    fn answered(
        response: &tokio_tungstenite::tungstenite::http::Response<Option<Vec<u8>>>,
    ) -> Ended {
        let status = response.status();
        let body = response
            .body()
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let body = crate::util::bounded::clip(&body, 300);
        match status.as_u16() {
            401 | 403 => Ended::Refused(refused(format!(
                "the hub refused the device ({status}): {body}; check the device's token (it may have been revoked)"
            ))),
            408 | 429 => Ended::Failed(format!("the hub is busy ({status})")),
            400..=499 => Ended::Refused(refused(format!(
                "the hub answered {status} at its device route: check the address, and that the hub has devices configured"
            ))),
            _ => Ended::Failed(format!("the hub answered {status}: {body}")),
        }
    }
}

fn refused(message: String) -> DeviceLinkError {
    DeviceLinkError { message }
}

/// The hub's `/devices/connect` as a WebSocket URL; plain text only to a loopback address
/// unless allowed.
fn connect_url(hub: &str, plain_text_anywhere: bool) -> Result<String, DeviceLinkError> {
    let hub = hub.trim_end_matches('/');
    let (secure, rest) = match hub.split_once("://") {
        Some(("https" | "wss", rest)) => (true, rest),
        Some(("http" | "ws", rest)) => (false, rest),
        _ => {
            return Err(refused(format!(
                "the hub address `{hub}` must start with https:// (or http:// on this machine)"
            )));
        }
    };
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(name, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) {
            name
        } else {
            host
        }
    });
    // An address, not a name that looks like one (`127.evil.com`).
    let address = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host == "localhost"
        || address
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !secure && !loopback && !plain_text_anywhere {
        return Err(refused(format!(
            "the hub `{hub}` would get the device's token in clear: use https://, or allow plain text for a private network"
        )));
    }
    // The hub's base address (under a path prefix, if it is mounted under one).
    let path = if rest.ends_with("/devices/connect") {
        ""
    } else {
        "/devices/connect"
    };
    Ok(format!(
        "{}://{rest}{path}",
        if secure { "wss" } else { "ws" }
    ))
}

/// Ends when the hub leaves a ping unanswered.
async fn unanswered_ping(peer: &rmcp::service::Peer<RoleServer>) {
    loop {
        tokio::time::sleep(PING_EVERY).await;
        let ping = peer.send_request(ServerRequest::PingRequest(PingRequest::default()));
        if !matches!(tokio::time::timeout(PING_ANSWER, ping).await, Ok(Ok(_))) {
            return;
        }
    }
}

/// `wait` and up to a quarter more.
fn jittered(wait: Duration) -> Duration {
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    wait + wait.mul_f64(f64::from(byte[0]) / 1024.0)
}

fn text_of(message: Message) -> Option<String> {
    match message {
        Message::Text(text) => Some(text.to_string()),
        _ => None,
    }
}

fn frame_of(text: String) -> Message {
    Message::Text(text.into())
}

#[cfg(test)]
mod tests {
    use super::connect_url;

    #[test]
    fn the_hubs_address_becomes_its_link_route_and_plain_text_stays_on_this_machine() {
        let url = |hub: &str| connect_url(hub, false);
        assert_eq!(
            url("https://hub.example.com").unwrap(),
            "wss://hub.example.com/devices/connect"
        );
        assert_eq!(
            url("https://hub.example.com/ai/").unwrap(),
            "wss://hub.example.com/ai/devices/connect"
        );
        assert_eq!(
            url("http://127.0.0.1:8080").unwrap(),
            "ws://127.0.0.1:8080/devices/connect"
        );
        assert_eq!(
            url("http://localhost:1/devices/connect").unwrap(),
            "ws://localhost:1/devices/connect"
        );
        assert_eq!(
            url("http://[::1]:9").unwrap(),
            "ws://[::1]:9/devices/connect"
        );
        for remote in [
            "http://hub.example.com",
            "ws://10.0.0.5:8080",
            "http://127.evil.com",
        ] {
            let refused = url(remote).unwrap_err();
            assert!(refused.message.contains("in clear"), "{remote}: {refused}");
        }
        assert!(connect_url("http://10.0.0.5:8080", true).is_ok());
        assert!(url("ftp://hub").unwrap_err().message.contains("https://"));
    }
}
