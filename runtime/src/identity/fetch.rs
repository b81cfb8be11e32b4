//! Asking an identity provider: one bounded HTTP request, answered with JSON. Redirects are
//! not followed (keys come from where the issuer's metadata says, nowhere else), and every
//! request has a deadline and a size limit, so a provider that hangs or answers without end
//! costs one bounded wait.

use std::time::Duration;

use serde::de::DeserializeOwned;

/// The largest answer read from a provider (metadata, keys, introspection).
const ANSWER_LIMIT: usize = 1024 * 1024;

/// An HTTP client for one identity's providers.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    pub(crate) fn new(timeout: Duration) -> Fetcher {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout)
            .timeout(timeout)
            .build()
            .unwrap_or_default();
        Fetcher { client }
    }

    /// The client, for the token requests of a sign-in.
    #[cfg(feature = "console")]
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// `GET url`, read as `T`.
    pub(crate) async fn get<T: DeserializeOwned>(&self, url: &str) -> Result<T, String> {
        let request = self.client.get(url).header("accept", "application/json");
        read(request).await
    }

    /// `POST url` with a form, authenticated as a client (HTTP Basic), read as `T`.
    pub(crate) async fn post_form<T: DeserializeOwned>(
        &self,
        url: &str,
        form: &[(&str, &str)],
        client: (&str, &str),
    ) -> Result<T, String> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .client
            .post(url)
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded")
            .basic_auth(encoded(client.0), Some(encoded(client.1)))
            .body(body);
        read(request).await
    }
}

/// A client id or secret as HTTP Basic carries it for OAuth (RFC 6749 §2.3.1: form-encoded
/// first).
fn encoded(part: &str) -> String {
    url::form_urlencoded::byte_serialize(part.as_bytes()).collect()
}

/// Sends `request` and reads its JSON answer, within [`ANSWER_LIMIT`].
async fn read<T: DeserializeOwned>(request: reqwest::RequestBuilder) -> Result<T, String> {
    let mut response = request.send().await.map_err(|error| unreachable(&error))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("it answered HTTP {}", status.as_u16()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| unreachable(&error))?
    {
        if body.len() + chunk.len() > ANSWER_LIMIT {
            return Err(format!("its answer is over {ANSWER_LIMIT} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body)
        .map_err(|error| format!("its answer is not the JSON expected: {error}"))
}

/// Why a provider could not be reached, without the URL's query (which may hold a secret).
fn unreachable(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "it did not answer in time"
    } else if error.is_connect() {
        "it could not be reached"
    } else {
        "the request failed"
    };
    match error.url() {
        Some(url) => format!(
            "{kind}: {}{}",
            url.origin().ascii_serialization(),
            url.path()
        ),
        None => kind.to_owned(),
    }
}
