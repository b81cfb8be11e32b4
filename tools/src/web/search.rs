//! `web_search`: results (title, address, snippet) from a configured search backend — a
//! SearXNG instance's JSON API, or Brave Search's API with a key from the environment. Every
//! request goes through the address checks of `fetch_webpage`.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolgate::prelude::*;
use url::Url;

use super::{WebConfig, pinned_client, read_body};

/// Brave Search's web search endpoint.
pub const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";

/// One search backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchBackend {
    /// A SearXNG instance (its `format=json` output must be enabled in its settings).
    Searxng {
        /// The instance's address, e.g. `http://127.0.0.1:8888`.
        url: String,
    },
    /// Brave Search's API.
    Brave {
        /// The endpoint ([`BRAVE_URL`] unless testing).
        url: String,
        /// The environment variable holding the subscription token (read at each call).
        api_key_env: String,
    },
}

/// The backends `web_search` may use, by name; the first added is the default.
#[derive(Debug, Clone, Default)]
pub struct WebSearchConfig {
    backends: BTreeMap<String, SearchBackend>,
    default: Option<String>,
    /// Where requests may go, their time limit and body cap.
    pub web: WebConfig,
}

impl WebSearchConfig {
    /// No backend yet; requests checked as `web` says.
    pub fn new(web: WebConfig) -> Self {
        WebSearchConfig {
            backends: BTreeMap::new(),
            default: None,
            web,
        }
    }

    /// Adds a backend under `name` (the first one added is used when a call names none).
    pub fn backend(mut self, name: impl Into<String>, backend: SearchBackend) -> Self {
        let name = name.into();
        self.default.get_or_insert_with(|| name.clone());
        self.backends.insert(name, backend);
        self
    }
}

/// Search the web and return the top results, each with a title, an address and a snippet.
#[tool(manual, group = "web", read_only, open_world)]
pub async fn web_search(
    /// What to search for.
    #[schemars(length(min = 1, max = 500))]
    query: String,
    /// How many results (1 to 20, default 5).
    #[schemars(range(min = 1, max = 20))]
    max_results: Option<u8>,
    /// Which configured search backend to use (default: the application's first).
    provider: Option<String>,
    #[ctx] config: State<WebSearchConfig>,
) -> Result<Value, ToolError> {
    let names = || {
        config
            .backends
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let name = provider
        .or_else(|| config.default.clone())
        .ok_or_else(|| ToolError::new("not_configured", "no search backend is configured"))?;
    let backend = config.backends.get(&name).ok_or_else(|| {
        ToolError::new(
            "unknown_provider",
            format!(
                "`{name}` is not a search backend here; the backends are {}",
                names()
            ),
        )
    })?;
    let max = usize::from(max_results.unwrap_or(5));
    let limit = config.web.timeout;
    let answer = tokio::time::timeout(limit, search(&config.web, backend, &query, max))
        .await
        .map_err(|_| {
            ToolError::new(
                ErrorCode::Timeout,
                format!("`{name}` did not answer within {} s", limit.as_secs_f64()),
            )
        })??;
    let results = match backend {
        SearchBackend::Searxng { .. } => results_of(&answer["results"], "content"),
        SearchBackend::Brave { .. } => results_of(&answer["web"]["results"], "description"),
    };
    let results: Vec<Value> = results.into_iter().take(max).collect();
    Ok(json!({"query": query, "provider": name, "results": results}))
}

async fn search(
    web: &WebConfig,
    backend: &SearchBackend,
    query: &str,
    max: usize,
) -> Result<Value, ToolError> {
    let (url, key) = match backend {
        SearchBackend::Searxng { url } => {
            let mut url = endpoint(url, "search")?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            (url, None)
        }
        SearchBackend::Brave { url, api_key_env } => {
            let key = std::env::var(api_key_env).map_err(|_| {
                ToolError::new(
                    "not_configured",
                    format!(
                        "the environment variable `{api_key_env}` (the search API key) is not set"
                    ),
                )
            })?;
            let mut url = endpoint(url, "")?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &max.to_string());
            (url, Some(key))
        }
    };
    let client = pinned_client(web, &url).await?;
    let mut request = client.get(url.clone()).header("accept", "application/json");
    if let Some(key) = key {
        request = request.header("x-subscription-token", key);
    }
    let mut response = request.send().await.map_err(|error| {
        ToolError::new(
            "search_failed",
            format!("the search backend could not be reached: {error}"),
        )
    })?;
    let status = response.status();
    let (body, _) = read_body(&mut response, web.max_bytes, &url).await?;
    if !status.is_success() {
        return Err(ToolError::new(
            "search_failed",
            format!("the search backend answered {status}"),
        )
        .with_details(json!({"status": status.as_u16()})));
    }
    serde_json::from_slice(&body).map_err(|error| {
        ToolError::new(
            "search_failed",
            format!("the search backend's answer is not JSON: {error}"),
        )
    })
}

/// `base` with `path` appended (an empty path keeps it as it is).
fn endpoint(base: &str, path: &str) -> Result<Url, ToolError> {
    let joined = if path.is_empty() {
        base.to_owned()
    } else {
        format!("{}/{path}", base.trim_end_matches('/'))
    };
    Url::parse(&joined).map_err(|error| {
        ToolError::execution(format!(
            "the search backend's address `{joined}` is not valid: {error}"
        ))
    })
}

/// Title, address and snippet of each result that has an address.
fn results_of(found: &Value, snippet_key: &str) -> Vec<Value> {
    found
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    let url = item["url"].as_str()?;
                    Some(json!({
                        "title": item["title"].as_str().unwrap_or_default(),
                        "url": url,
                        "snippet": strip_tags(item[snippet_key].as_str().unwrap_or_default()),
                    }))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Snippets may carry highlighting tags (`<strong>`); the model gets plain text.
fn strip_tags(snippet: &str) -> String {
    let fragment = scraper::Html::parse_fragment(snippet);
    let text: String = fragment.root_element().text().collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
