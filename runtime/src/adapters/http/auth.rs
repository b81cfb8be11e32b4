//! Who is calling: decided by the application, from the request.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::Json;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::caller::Caller;

/// A refused request: `401` (who are you?), `403` (not you) or `503` (who you are cannot be
/// checked now). A `401` or `403` is answered with a `WWW-Authenticate: Bearer` challenge
/// (RFC 6750) naming the error, the scope needed and, where the application publishes it,
/// the resource's metadata (RFC 9728), as MCP's authorization asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError {
    /// `401 Unauthorized`, `403 Forbidden` or `503 Service Unavailable`.
    pub status: StatusCode,
    /// Said to the client.
    pub message: String,
    /// Boxed: a refusal is rare, and a small error keeps every request's authentication
    /// future small.
    challenge: Box<Challenge>,
}

/// What the `WWW-Authenticate` header says beside `Bearer`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Challenge {
    error: Option<&'static str>,
    scope: Option<String>,
    resource_metadata: Option<String>,
}

impl AuthError {
    /// `401`: unknown or invalid credentials (`error="invalid_token"`).
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        AuthError::with(StatusCode::UNAUTHORIZED, Some("invalid_token"), message)
    }

    /// `401`: no credentials were sent (a challenge without an error, RFC 6750 §3.1).
    pub fn no_credentials(message: impl Into<String>) -> Self {
        AuthError::with(StatusCode::UNAUTHORIZED, None, message)
    }

    /// `403`: known, but not allowed in (`error="insufficient_scope"`).
    pub fn forbidden(message: impl Into<String>) -> Self {
        AuthError::with(StatusCode::FORBIDDEN, Some("insufficient_scope"), message)
    }

    /// `503`: the caller cannot be checked now (an identity provider is down); not a `401`,
    /// so a client keeps its credentials and tries again.
    pub fn unavailable(message: impl Into<String>) -> Self {
        AuthError::with(StatusCode::SERVICE_UNAVAILABLE, None, message)
    }

    /// Names the scopes that would do (`scope="..."` in the challenge).
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.challenge.scope = Some(scope.into());
        self
    }

    /// Names where the resource's metadata is (`resource_metadata="..."`).
    pub fn with_resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.challenge.resource_metadata = Some(url.into());
        self
    }

    fn with(status: StatusCode, error: Option<&'static str>, message: impl Into<String>) -> Self {
        AuthError {
            status,
            message: message.into(),
            challenge: Box::new(Challenge {
                error,
                ..Challenge::default()
            }),
        }
    }

    /// The stable code of the JSON error body.
    pub(crate) fn code(&self) -> &'static str {
        match self.status {
            StatusCode::FORBIDDEN => "forbidden",
            StatusCode::SERVICE_UNAVAILABLE => "identity_unavailable",
            _ => "unauthenticated",
        }
    }

    /// The `WWW-Authenticate` value of a `401` or `403`; `metadata` is named when the error
    /// names none. Quoted values are left out if they hold a quote or backslash.
    pub(crate) fn www_authenticate(&self, metadata: Option<&str>) -> Option<String> {
        if !matches!(
            self.status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
        ) {
            return None;
        }
        let challenge = &self.challenge;
        let metadata = challenge.resource_metadata.as_deref().or(metadata);
        let parameters = [
            ("error", challenge.error),
            ("scope", challenge.scope.as_deref()),
            ("resource_metadata", metadata),
        ];
        let said: Vec<String> = parameters
            .into_iter()
            .filter_map(|(name, value)| Some((name, value?)))
            .filter(|(_, value)| {
                !value.contains(['"', '\\']) && !value.chars().any(char::is_control)
            })
            .map(|(name, value)| format!("{name}=\"{value}\""))
            .collect();
        Some(match said.is_empty() {
            true => "Bearer".to_owned(),
            false => format!("Bearer {}", said.join(", ")),
        })
    }
}

/// The answer to a request the authentication hook did not let in: JSON
/// (`{"error": {"code", "message"}}`) with the `WWW-Authenticate` challenge of a `401` or
/// `403`, naming `metadata` where the error names no resource metadata of its own.
pub(crate) fn refusal(error: AuthError, metadata: Option<&str>) -> Response {
    let challenge = error.www_authenticate(metadata);
    let body = serde_json::json!({"error": {"code": error.code(), "message": error.message}});
    let mut response = (error.status, Json(body)).into_response();
    if let Some(value) = challenge.and_then(|text| HeaderValue::from_str(&text).ok()) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The future of an authentication: an answer known at once ([`AuthFuture::ready`], kept
/// inline: most checks are a header and a lookup), or a lookup that must wait
/// ([`AuthFuture::new`], boxed).
///
/// ```
/// use toolgate::Caller;
/// use toolgate::http::{AuthError, AuthFuture};
///
/// let known = AuthFuture::ready(Ok(Caller::new("ana", "staff")));
/// let looked_up = AuthFuture::new(async { Err(AuthError::unauthenticated("unknown token")) });
/// # drop((known, looked_up));
/// ```
pub struct AuthFuture(Answer);

enum Answer {
    Ready(Option<Result<Caller, AuthError>>),
    Waiting(Pin<Box<dyn Future<Output = Result<Caller, AuthError>> + Send + 'static>>),
}

impl AuthFuture {
    /// An answer known now.
    pub fn ready(answer: Result<Caller, AuthError>) -> Self {
        AuthFuture(Answer::Ready(Some(answer)))
    }

    /// An answer still to be looked up (a session store, a token service).
    pub fn new(lookup: impl Future<Output = Result<Caller, AuthError>> + Send + 'static) -> Self {
        AuthFuture(Answer::Waiting(Box::pin(lookup)))
    }
}

impl Future for AuthFuture {
    type Output = Result<Caller, AuthError>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            Answer::Ready(answer) => Poll::Ready(
                answer
                    .take()
                    .expect("an authentication is not polled after it answered"),
            ),
            Answer::Waiting(lookup) => lookup.as_mut().poll(context),
        }
    }
}

impl std::fmt::Debug for AuthFuture {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.0 {
            Answer::Ready(_) => "ready",
            Answer::Waiting(_) => "waiting",
        };
        formatter.debug_tuple("AuthFuture").field(&state).finish()
    }
}

/// Turns a request into a [`Caller`] with the application's own authentication (sessions,
/// bearer tokens, mTLS, ...). Implemented for closures `Fn(&Parts) -> Result<Caller, AuthError>`;
/// implement the trait for lookups that must `.await` (take what you need from `parts`
/// before the future, and return it as [`AuthFuture::new`]).
pub trait Authenticate: Send + Sync + 'static {
    /// The caller of this request, or why it is refused.
    fn authenticate(&self, parts: &Parts) -> AuthFuture;
}

impl<F> Authenticate for F
where
    F: Fn(&Parts) -> Result<Caller, AuthError> + Send + Sync + 'static,
{
    fn authenticate(&self, parts: &Parts) -> AuthFuture {
        AuthFuture::ready(self(parts))
    }
}

#[cfg(test)]
mod tests {
    use super::{AuthError, AuthFuture};
    use crate::Caller;

    #[tokio::test]
    async fn an_answer_known_at_once_and_one_looked_up_both_arrive() {
        let known = AuthFuture::ready(Ok(Caller::new("ana", "staff")));
        assert_eq!(format!("{known:?}"), r#"AuthFuture("ready")"#);
        assert_eq!(known.await, Ok(Caller::new("ana", "staff")));

        let looked_up = AuthFuture::new(async {
            tokio::task::yield_now().await;
            Err(AuthError::forbidden("not on the rota"))
        });
        assert_eq!(format!("{looked_up:?}"), r#"AuthFuture("waiting")"#);
        assert_eq!(
            looked_up.await,
            Err(AuthError::forbidden("not on the rota"))
        );
    }
}
