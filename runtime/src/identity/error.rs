//! Why a token was refused, and how the refusal is answered: `401` (who are you?), `403`
//! (known, but not allowed), `503` (the provider cannot be asked now). No message quotes the
//! token or any of its claims' values.

/// Why a request's token identifies no caller. Each says what to do about it; none quotes
/// the token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdentityError {
    /// No token was sent.
    NoToken,
    /// The token is not one toolgate can read: not a JWT, or a JWT whose header or claims
    /// are not JSON, with no introspection configured for opaque tokens.
    Malformed(&'static str),
    /// The token is longer than the limit (it is not read at all).
    TooLarge {
        /// Its length in bytes.
        bytes: usize,
        /// The limit ([`IdentityBuilder::max_token_bytes`](super::IdentityBuilder::max_token_bytes)).
        limit: usize,
    },
    /// The token's algorithm is not one the application accepts (`none` and the symmetric
    /// `HS*` never are), or does not fit the key it names.
    AlgorithmNotAllowed(String),
    /// The token's issuer is not one this application trusts.
    UntrustedIssuer,
    /// The token names a key its issuer does not publish (or no longer does).
    UnknownKey,
    /// The signature does not match the issuer's key.
    BadSignature,
    /// The token has expired.
    Expired,
    /// The token is not valid yet (`nbf` in the future).
    NotYetValid,
    /// The token was issued for another resource (`aud`).
    WrongAudience {
        /// This resource's identifier, the audience a token must name.
        expected: String,
    },
    /// A claim every token must have is missing or not of its type.
    MissingClaim(String),
    /// The issuer says the (opaque) token is not active: expired, revoked or unknown.
    Inactive,
    /// The token is valid, but none of its claims maps to a role.
    NoRole(String),
    /// The token lacks a scope this resource requires.
    InsufficientScope {
        /// The scopes that would do, space-separated.
        scope: String,
    },
    /// The identity provider could not be asked (down, unreachable, or answering nonsense),
    /// and nothing cached can answer instead.
    ProviderUnavailable {
        /// The issuer.
        issuer: String,
        /// What went wrong.
        why: String,
    },
    /// Too many unknown opaque tokens to look up at once.
    Busy,
    /// The sign-in session named by the request's cookie has ended (signed out, expired,
    /// or never was).
    SessionEnded,
    /// Sessions cannot be read or kept: the session store failed.
    SessionsUnavailable(String),
    /// A sign-in was asked for, but the identity has no session store
    /// ([`IdentityBuilder::sessions`](super::IdentityBuilder::sessions)).
    NoSessions,
}

impl IdentityError {
    /// The HTTP status: `401`, `403` ([`NoRole`](Self::NoRole),
    /// [`InsufficientScope`](Self::InsufficientScope)) or `503`
    /// ([`ProviderUnavailable`](Self::ProviderUnavailable), [`Busy`](Self::Busy)).
    pub fn status(&self) -> u16 {
        match self {
            IdentityError::NoRole(_) | IdentityError::InsufficientScope { .. } => 403,
            IdentityError::ProviderUnavailable { .. }
            | IdentityError::Busy
            | IdentityError::SessionsUnavailable(_)
            | IdentityError::NoSessions => 503,
            _ => 401,
        }
    }

    /// The `error` of the `WWW-Authenticate: Bearer` challenge (RFC 6750): none when no
    /// token was sent or the provider could not be asked, `insufficient_scope` for a valid
    /// token that may not do this (`403`), else `invalid_token`.
    pub fn bearer_error(&self) -> Option<&'static str> {
        match self {
            IdentityError::NoToken
            | IdentityError::ProviderUnavailable { .. }
            | IdentityError::Busy
            | IdentityError::SessionsUnavailable(_)
            | IdentityError::NoSessions => None,
            IdentityError::InsufficientScope { .. } | IdentityError::NoRole(_) => {
                Some("insufficient_scope")
            }
            _ => Some("invalid_token"),
        }
    }
}

impl std::fmt::Display for IdentityError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdentityError::NoToken => {
                formatter.write_str("send an access token as `Authorization: Bearer <token>`")
            }
            IdentityError::Malformed(why) => write!(formatter, "the token cannot be read: {why}"),
            IdentityError::TooLarge { bytes, limit } => write!(
                formatter,
                "the token is {bytes} bytes, over the limit of {limit}; it was not read"
            ),
            IdentityError::AlgorithmNotAllowed(alg) => write!(
                formatter,
                "the token is signed with `{alg}`, which is not accepted here (accepted: the \
                 application's asymmetric algorithms, never `none` or `HS*`)"
            ),
            IdentityError::UntrustedIssuer => {
                formatter.write_str("the token's issuer is not one this server trusts")
            }
            IdentityError::UnknownKey => formatter.write_str(
                "the token is signed with a key its issuer does not publish; get a new token",
            ),
            IdentityError::BadSignature => {
                formatter.write_str("the token's signature does not match its issuer's key")
            }
            IdentityError::Expired => formatter.write_str("the token has expired; get a new one"),
            IdentityError::NotYetValid => formatter.write_str("the token is not valid yet (nbf)"),
            IdentityError::WrongAudience { expected } => write!(
                formatter,
                "the token was issued for another resource; ask for one for `{expected}` \
                 (the `resource` parameter)"
            ),
            IdentityError::MissingClaim(claim) => {
                write!(
                    formatter,
                    "the token has no `{claim}` claim of the expected type"
                )
            }
            IdentityError::Inactive => formatter
                .write_str("the issuer says the token is not active (expired, revoked or unknown)"),
            IdentityError::NoRole(why) => write!(formatter, "the token maps to no role: {why}"),
            IdentityError::InsufficientScope { scope } => {
                write!(
                    formatter,
                    "the token lacks the scope needed here: `{scope}`"
                )
            }
            IdentityError::ProviderUnavailable { issuer, why } => write!(
                formatter,
                "tokens cannot be checked now: the identity provider `{issuer}` could not be \
                 asked ({why}); try again when it answers"
            ),
            IdentityError::Busy => formatter
                .write_str("too many unknown tokens to look up at once; try again in a moment"),
            IdentityError::SessionEnded => {
                formatter.write_str("the sign-in session has ended; sign in again")
            }
            IdentityError::SessionsUnavailable(why) => {
                write!(formatter, "sign-in sessions cannot be read now: {why}")
            }
            IdentityError::NoSessions => formatter.write_str(
                "sign-in sessions are not set up: give the identity a session store \
                 (`IdentityBuilder::sessions`)",
            ),
        }
    }
}

impl std::error::Error for IdentityError {}

/// What is wrong with an identity's settings, found by
/// [`IdentityBuilder::build`](super::IdentityBuilder::build): every problem, one a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityConfigError {
    /// The problems, each naming the setting and the fix.
    pub problems: Vec<String>,
}

impl std::fmt::Display for IdentityConfigError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "the identity settings are not usable:")?;
        for problem in &self.problems {
            write!(formatter, "\n  - {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for IdentityConfigError {}
