//! Who is calling: decided by the application, from the request.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::http::StatusCode;
use axum::http::request::Parts;

use crate::caller::Caller;

/// A refused request: `401` (who are you?) or `403` (not you).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError {
    /// `401 Unauthorized` or `403 Forbidden`.
    pub status: StatusCode,
    /// Said to the client.
    pub message: String,
}

impl AuthError {
    /// `401`: missing or unknown credentials.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        AuthError {
            status: StatusCode::UNAUTHORIZED,
            message: message.into(),
        }
    }

    /// `403`: known, but not allowed in.
    pub fn forbidden(message: impl Into<String>) -> Self {
        AuthError {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
        }
    }
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
