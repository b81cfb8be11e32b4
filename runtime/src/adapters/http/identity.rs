//! An [`Identity`] as the HTTP router's, MCP's and the console's authentication: the
//! request's `Authorization: Bearer` token, else the console's session cookie; and the
//! resource's metadata route (RFC 9728).

use axum::Router;
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::auth::{AuthError, AuthFuture, Authenticate};
use crate::identity::{Identity, IdentityError, SESSION_COOKIE};

impl Authenticate for Identity {
    fn authenticate(&self, parts: &Parts) -> AuthFuture {
        match credentials(parts) {
            // A token checked before answers at once, with nothing to wait for.
            Ok(Credentials::Token(token)) if let Some(caller) = self.remembered_caller(token) => {
                AuthFuture::ready(Ok(caller))
            }
            Ok(Credentials::Token(token)) => {
                let (identity, token) = (self.clone(), token.to_owned());
                AuthFuture::new(async move {
                    identity
                        .caller(&token)
                        .await
                        .map_err(|error| identity.refused(error))
                })
            }
            Ok(Credentials::Session(secret)) if self.sessions().is_some() => {
                let (identity, secret) = (self.clone(), secret.to_owned());
                AuthFuture::new(async move {
                    identity
                        .session_caller(&secret)
                        .await
                        .map_err(|error| identity.refused(error))
                })
            }
            Ok(_) => AuthFuture::ready(Err(self.refused(IdentityError::NoToken))),
            Err(error) => AuthFuture::ready(Err(self.refused(error))),
        }
    }
}

/// What a request presents.
enum Credentials<'a> {
    Token(&'a str),
    Session(String),
    None,
}

/// The bearer token of `Authorization` (its scheme in any case), else the session cookie.
fn credentials(parts: &Parts) -> Result<Credentials<'_>, IdentityError> {
    if let Some(value) = parts.headers.get(AUTHORIZATION) {
        let value = value
            .to_str()
            .map_err(|_| IdentityError::Malformed("the Authorization header is not text"))?;
        let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(IdentityError::Malformed(
                "the Authorization header is not `Bearer <token>`",
            ));
        }
        return Ok(Credentials::Token(token.trim()));
    }
    let session = cookie_value(&parts.headers, SESSION_COOKIE);
    Ok(session.map_or(Credentials::None, Credentials::Session))
}

/// The value of the cookie `name` among a request's `Cookie` headers.
pub(crate) fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|cookies| cookies.split(';'))
        .filter_map(|cookie| cookie.trim().split_once('='))
        .find(|(found, _)| *found == name)
        .map(|(_, value)| value.to_owned())
}

impl Identity {
    /// The answer to a refused request: its status, message and challenge, naming the
    /// scopes and this resource's metadata.
    pub(crate) fn refused(&self, error: IdentityError) -> AuthError {
        let message = error.to_string();
        let mut refused = match error.status() {
            403 => AuthError::forbidden(message),
            503 => AuthError::unavailable(message),
            _ if error.bearer_error().is_none() => AuthError::no_credentials(message),
            _ => AuthError::unauthenticated(message),
        };
        let scope = match &error {
            IdentityError::InsufficientScope { scope } => Some(scope.clone()),
            _ => self.challenge_scope(),
        };
        if let Some(scope) = scope {
            refused = refused.with_scope(scope);
        }
        match self.resource_metadata_url() {
            Some(url) => refused.with_resource_metadata(url),
            None => refused,
        }
    }

    /// The route publishing this resource's metadata (RFC 9728) at
    /// `/.well-known/oauth-protected-resource` followed by the resource's path, and at the
    /// bare well-known path too: merge it at the root of the site.
    pub fn metadata_router(&self) -> Router {
        let document = self.resource_metadata().to_string();
        let serve = move || {
            let document = document.clone();
            async move { metadata_response(document) }
        };
        let bare = "/.well-known/oauth-protected-resource";
        let mut router = Router::new().route(bare, get(serve.clone()));
        if let Some(url) = self.resource_metadata_url()
            && let Some((_, path)) = crate::identity::split_origin(&url)
            && path != bare
        {
            router = router.route(path, get(serve));
        }
        router
    }
}

fn metadata_response(document: String) -> Response {
    let mut response = (StatusCode::OK, document).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // Clients in browsers read it from other origins (RFC 9728 §3.2 allows any).
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

#[cfg(test)]
mod tests {
    use axum::http::Request;

    use super::{Credentials, credentials};

    fn parts(header: (&str, &str)) -> axum::http::request::Parts {
        let (parts, ()) = Request::get("/")
            .header(header.0, header.1)
            .body(())
            .unwrap()
            .into_parts();
        parts
    }

    #[test]
    fn a_bearer_token_is_read_in_any_case_and_a_cookie_only_by_its_name() {
        let bearer = parts(("authorization", "bEaReR abc.def.ghi"));
        let token = credentials(&bearer).unwrap();
        assert!(matches!(token, Credentials::Token("abc.def.ghi")));
        assert!(credentials(&parts(("authorization", "Basic YTpi"))).is_err());
        let cookies = parts(("cookie", "other=1; toolgate_session=s3cr3t"));
        let cookie = credentials(&cookies).unwrap();
        assert!(matches!(cookie, Credentials::Session(s) if s == "s3cr3t"));
        let lookalike = parts(("cookie", "xtoolgate_session=no"));
        assert!(matches!(
            credentials(&lookalike).unwrap(),
            Credentials::None
        ));
    }
}
