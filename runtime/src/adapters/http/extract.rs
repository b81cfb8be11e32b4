//! What a handler takes from a request, as axum extractors answering with our JSON errors:
//! the caller (from the application's authentication) and, with it, a JSON body (declared
//! JSON, within the router's body limit). A request refused before its body is read has
//! the body read first (see [`unread`](super::unread)).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::adapters::http::Shared;
use crate::adapters::http::auth::{AuthError, AuthFuture, refusal};
use crate::adapters::http::errors::ApiError;
use crate::adapters::http::unread::{after_reading, discard_rest};
use crate::caller::Caller;

/// The caller of the request, as the application's [`Authenticate`](super::Authenticate)
/// hook identified it. For routes without a body; a route with one takes [`CallerAndBody`].
pub(crate) struct Authenticated(pub(crate) Caller);

impl FromRequestParts<Arc<Shared>> for Authenticated {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, Response> {
        let identified = shared.auth.authenticate(parts).await;
        identified.map(Authenticated).map_err(not_let_in)
    }
}

/// The answer to a request that the authentication hook did not let in (with its
/// `WWW-Authenticate` challenge).
pub(crate) fn not_let_in(error: AuthError) -> Response {
    refusal(error, None)
}

/// The caller, and the request's body declared as JSON. A body that is not declared JSON is
/// refused: browsers send `text/plain` and form bodies across sites without asking (CSRF),
/// never `application/json`.
pub(crate) struct CallerAndBody(pub(crate) Caller, pub(crate) Bytes);

impl FromRequest<Arc<Shared>> for CallerAndBody {
    type Rejection = Response;

    async fn from_request(request: Request, shared: &Arc<Shared>) -> Result<Self, Response> {
        let (parts, body) = request.into_parts();
        let identified = shared.auth.authenticate(&parts);
        let json = declares_json(parts.headers.get(CONTENT_TYPE));
        drop(parts);
        let (caller, body) = admit(identified, json, body, shared.options.body_limit).await?;
        Ok(CallerAndBody(caller, body))
    }
}

/// The caller as `identified`, and the body if it is declared `json` and within `limit`:
/// each refused with its own error, in that order, the body read before any refusal.
async fn admit(
    identified: AuthFuture,
    json: bool,
    body: Body,
    limit: usize,
) -> Result<(Caller, Bytes), Response> {
    let caller = match identified.await {
        Ok(caller) => caller,
        Err(refused) => return Err(after_reading(body, not_let_in(refused)).await),
    };
    if !json {
        return Err(after_reading(body, not_json().into_response()).await);
    }
    match read_within(body, limit).await {
        Ok(body) => Ok((caller, body)),
        Err(refused) => Err(refused.into_response()),
    }
}

/// The answer to a body not declared as JSON (see [`CallerAndBody`]).
pub(crate) fn not_json() -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "send the body as JSON with `Content-Type: application/json`",
    )
}

/// The whole of `body`, refused past `limit` bytes (what is left of it read first, see
/// [`unread`](super::unread)). The limit is applied here rather than by a `DefaultBodyLimit`
/// layer: a layer wraps every route in one more service, cloned per request.
pub(crate) async fn read_within(mut body: Body, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(&mut body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) => {
            discard_rest(body).await;
            Err(unreadable(&*error, limit))
        }
    }
}

/// Whether `content_type` declares JSON: `application/json` or `application/*+json`.
pub(crate) fn declares_json(content_type: Option<&axum::http::HeaderValue>) -> bool {
    // The usual header, exactly as clients send it: nothing to take apart.
    if content_type.is_some_and(|value| value.as_bytes() == b"application/json") {
        return true;
    }
    let declared = content_type
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let essence = declared.split(';').next().unwrap_or_default().trim();
    // Media types are case-insensitive; compared in place, without a lowercased copy.
    let is = |part: Option<&str>, expected: &str| {
        part.is_some_and(|part| part.eq_ignore_ascii_case(expected))
    };
    let suffix = essence
        .len()
        .checked_sub("+json".len())
        .and_then(|start| essence.get(start..));
    is(Some(essence), "application/json")
        || (is(essence.get(.."application/".len()), "application/") && is(suffix, "+json"))
}

fn unreadable(error: &(dyn std::error::Error + 'static), limit: usize) -> ApiError {
    if over_the_limit(error) {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the body is over the limit of {limit} bytes"),
        )
    } else {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "unreadable_body",
            format!("the body could not be read: {error}"),
        )
    }
}

/// Whether reading stopped at the limit (the error says so somewhere along its sources).
fn over_the_limit(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = source {
        if error.is::<LengthLimitError>() {
            return true;
        }
        source = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, Bytes, to_bytes};
    use axum::http::HeaderValue;

    use super::{declares_json, unreadable};

    #[tokio::test]
    async fn a_body_over_the_limit_is_told_from_one_that_failed() {
        let sized = to_bytes(Body::from("x".repeat(11)), 10).await.unwrap_err();
        let chunks = (0..3).map(|_| Ok::<_, std::io::Error>(Bytes::from("12345")));
        let streamed = Body::from_stream(futures::stream::iter(chunks));
        let streamed = to_bytes(streamed, 10).await.unwrap_err();
        for error in [sized, streamed] {
            let refused = unreadable(&error, 10);
            assert_eq!(refused.code, "body_too_large");
            assert_eq!(refused.message, "the body is over the limit of 10 bytes");
        }
        let broken = [
            Ok(Bytes::from("{")),
            Err(std::io::Error::other("connection reset")),
        ];
        let broken = Body::from_stream(futures::stream::iter(broken));
        let error = to_bytes(broken, 10).await.unwrap_err();
        let refused = unreadable(&error, 10);
        assert_eq!(refused.code, "unreadable_body");
        assert!(
            refused.message.contains("connection reset"),
            "{}",
            refused.message
        );
        assert_eq!(
            to_bytes(Body::from("x".repeat(10)), 10)
                .await
                .unwrap()
                .len(),
            10
        );
    }

    #[test]
    fn json_is_declared_by_its_media_type_in_any_case() {
        let declared = |value: &str| declares_json(Some(&HeaderValue::from_str(value).unwrap()));
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
            "application/problem+json",
            "APPLICATION/VND.API+JSON",
        ] {
            assert!(declared(json), "{json}");
        }
        for other in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/jsonp",
            "text/json",
            "application/json5",
            "+json",
            "application/",
            "",
        ] {
            assert!(!declared(other), "{other}");
        }
        assert!(!declares_json(None));
    }
}
