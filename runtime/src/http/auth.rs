//! Who is calling: decided by the application, from the request.

use std::future::Future;
use std::pin::Pin;

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

/// The future of an authentication.
pub type AuthFuture = Pin<Box<dyn Future<Output = Result<Caller, AuthError>> + Send + 'static>>;

/// Turns a request into a [`Caller`] with the application's own authentication (sessions,
/// bearer tokens, mTLS, ...). Implemented for closures `Fn(&Parts) -> Result<Caller, AuthError>`;
/// implement the trait for lookups that must `.await` (take what you need from `parts`
/// before the future).
pub trait Authenticate: Send + Sync + 'static {
    /// The caller of this request, or why it is refused.
    fn authenticate(&self, parts: &Parts) -> AuthFuture;
}

impl<F> Authenticate for F
where
    F: Fn(&Parts) -> Result<Caller, AuthError> + Send + Sync + 'static,
{
    fn authenticate(&self, parts: &Parts) -> AuthFuture {
        Box::pin(std::future::ready(self(parts)))
    }
}
