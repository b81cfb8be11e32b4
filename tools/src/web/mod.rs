//! Fetching web pages, with the addresses a page may be fetched from checked before every
//! connection (also after DNS resolution and on each redirect).

mod extract;
mod guard;
mod search;

pub use search::{BRAVE_URL, SearchBackend, WebSearchConfig, web_search, web_search_tool};

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use ipnet::IpNet;
use reqwest::redirect::Policy;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate::prelude::*;
use url::Url;

/// How `fetch_webpage` fetches.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// Time limit of a whole fetch, redirects included (default 15 s).
    pub timeout: Duration,
    /// Most body bytes read; the rest is cut off (default 2 MiB).
    pub max_bytes: usize,
    /// Most redirects followed (default 5).
    pub max_redirects: usize,
    /// Networks that may be reached although they are not public (e.g. `127.0.0.0/8` for a
    /// local service). Empty by default: private, loopback and link-local addresses are refused.
    pub allowed_networks: Vec<IpNet>,
    /// The `User-Agent` sent.
    pub user_agent: String,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            timeout: Duration::from_secs(15),
            max_bytes: 2 * 1024 * 1024,
            max_redirects: 5,
            allowed_networks: Vec::new(),
            user_agent: format!("toolgate-tools/{}", env!("CARGO_PKG_VERSION")),
        }
    }
}

impl WebConfig {
    /// Also allows a network that is not public, e.g. `"127.0.0.0/8"`.
    pub fn allow_network(mut self, network: &str) -> Result<Self, ipnet::AddrParseError> {
        self.allowed_networks.push(network.parse()?);
        Ok(self)
    }
}

/// What to extract from a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Extract {
    /// The readable text.
    #[default]
    Text,
    /// The links, with their text.
    Links,
}

/// Fetch a web page over HTTP(S) and return its readable text or its links.
#[tool(manual, group = "web", read_only, open_world)]
pub async fn fetch_webpage(
    /// The page's address, `http://` or `https://`.
    #[schemars(length(min = 1, max = 2000))]
    url: String,
    /// `text` (default) or `links`.
    #[serde(default)]
    extract: Extract,
    #[ctx] config: State<WebConfig>,
) -> Result<Value, ToolError> {
    let limit = config.timeout;
    match tokio::time::timeout(limit, fetch(&config, &url, extract)).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!("the page did not answer within {} s", limit.as_secs_f64()),
        )),
    }
}

async fn fetch(config: &WebConfig, address: &str, extract: Extract) -> Result<Value, ToolError> {
    let mut url = Url::parse(address).map_err(|error| {
        ToolError::invalid_arguments(format!("`{address}` is not a URL: {error}"))
    })?;
    for _ in 0..=config.max_redirects {
        let client = pinned_client(config, &url).await?;
        let mut response = client.get(url.clone()).send().await.map_err(|error| {
            ToolError::new(
                "fetch_failed",
                format!("`{url}` could not be fetched: {error}"),
            )
        })?;
        if response.status().is_redirection()
            && let Some(location) = response.headers().get(reqwest::header::LOCATION)
        {
            let location = location.to_str().unwrap_or_default();
            url = url
                .join(location)
                .map_err(|_| refused(&url, "it redirects to an invalid address"))?;
            continue;
        }
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let (body, truncated) = read_body(&mut response, config.max_bytes, &url).await?;
        return Ok(describe(
            &url,
            status,
            &content_type,
            &body,
            truncated,
            extract,
        ));
    }
    Err(ToolError::new(
        "too_many_redirects",
        format!(
            "more than {} redirects; stopped at `{url}`",
            config.max_redirects
        ),
    ))
}

/// A client that connects to exactly the address checked for `url` (no second DNS lookup to
/// rebind), follows no redirect and uses no proxy from the environment (`HTTP_PROXY`,
/// `ALL_PROXY`: a proxy would be sent the request instead of the checked address). Refuses
/// addresses that are not `http(s)` or not public (unless allowed).
pub(crate) async fn pinned_client(
    config: &WebConfig,
    url: &Url,
) -> Result<reqwest::Client, ToolError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refused(url, "only http and https addresses are fetched"));
    }
    let host = url
        .host_str()
        .ok_or_else(|| refused(url, "the address has no host"))?
        .to_owned();
    let port = url.port_or_known_default().unwrap_or(80);
    let address = checked_address(config, url, &host, port).await?;
    reqwest::Client::builder()
        .no_proxy()
        .redirect(Policy::none())
        .user_agent(&config.user_agent)
        .resolve(host.trim_start_matches('[').trim_end_matches(']'), address)
        .build()
        .map_err(|error| {
            ToolError::execution(format!("the HTTP client could not be set up: {error}"))
        })
}

/// Reads a response body, keeping at most `max_bytes` (and whether more was cut off).
pub(crate) async fn read_body(
    response: &mut reqwest::Response,
    max_bytes: usize,
    url: &Url,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| {
        ToolError::new("fetch_failed", format!("reading `{url}` failed: {error}"))
    })? {
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// The address to connect to, after checking every address the host resolves to.
async fn checked_address(
    config: &WebConfig,
    url: &Url,
    host: &str,
    port: u16,
) -> Result<SocketAddr, ToolError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|error| {
                ToolError::new(
                    "fetch_failed",
                    format!("`{host}` could not be resolved: {error}"),
                )
            })?
            .collect(),
    };
    let Some(first) = addresses.first().copied() else {
        return Err(ToolError::new(
            "fetch_failed",
            format!("`{host}` has no address"),
        ));
    };
    // Every address must pass: a host that resolves to a public and a private address is refused.
    let blocked = addresses.iter().find_map(|address| {
        let reason = guard::non_public_reason(address.ip())?;
        (!guard::allowed(address.ip(), &config.allowed_networks)).then_some((address, reason))
    });
    if let Some((blocked, reason)) = blocked {
        return Err(refused(
            url,
            &format!(
                "`{host}` resolves to {}, which is not a public address ({reason})",
                blocked.ip()
            ),
        ));
    }
    Ok(first)
}

fn refused(url: &Url, why: &str) -> ToolError {
    ToolError::new(
        "address_not_allowed",
        format!("`{url}` may not be fetched: {why}"),
    )
}

fn describe(
    url: &Url,
    status: u16,
    content_type: &str,
    body: &[u8],
    truncated: bool,
    extract: Extract,
) -> Value {
    let mut answer = json!({"url": url.as_str(), "status": status, "content_type": content_type, "bytes": body.len(), "truncated": truncated});
    let html = content_type.contains("html");
    let text = html
        || content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml");
    match (extract, html, text) {
        (Extract::Links, true, _) => answer["links"] = Value::Array(extract::html_links(body, url)),
        (Extract::Text, true, _) => answer["text"] = Value::String(extract::html_text(body)),
        (_, false, true) => {
            answer["text"] = Value::String(String::from_utf8_lossy(body).into_owned())
        }
        (_, false, false) => answer["binary"] = Value::Bool(true),
    }
    answer
}
