//! Checking a JWT access token: its header (an accepted asymmetric algorithm; `jku`, `x5u`
//! and embedded keys are never followed), its signature against the issuer's keys, and its
//! claims (`iss`, `aud`, `exp`, `nbf` with a leeway). The cryptography is `jsonwebtoken`'s.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::IdentityError;

/// The parts of a token read before its signature is checked: which issuer to ask, with
/// which key and algorithm.
pub(crate) struct Unverified {
    pub(crate) header: Header,
    pub(crate) issuer: String,
}

#[derive(Deserialize)]
struct IssuerOnly {
    iss: Option<String>,
}

/// Whether a token has the shape of a JWT (three base64url parts); anything else is an
/// opaque token, for introspection.
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// The header and the claimed issuer, unverified: only to choose the keys and the checks.
pub(crate) fn peek(token: &str, accepted: &[Algorithm]) -> Result<Unverified, IdentityError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| {
        IdentityError::Malformed(
            "its header is not a JWS header of a signature algorithm (`none` is never accepted)",
        )
    })?;
    if !accepted.contains(&header.alg) {
        return Err(IdentityError::AlgorithmNotAllowed(format!(
            "{:?}",
            header.alg
        )));
    }
    let claimed: IssuerOnly = jsonwebtoken::dangerous::insecure_decode_claims(token)
        .map_err(|_| IdentityError::Malformed("its claims are not a JSON object"))?;
    let issuer = claimed
        .iss
        .ok_or_else(|| IdentityError::MissingClaim("iss".to_owned()))?;
    Ok(Unverified { header, issuer })
}

/// The checks of an issuer's tokens signed with `algorithm`, made once: `iss`, `aud`,
/// `exp` and `nbf` (with the leeway), all three of `exp`, `iss` and `aud` required.
pub(crate) fn checks(
    algorithm: Algorithm,
    issuer: &str,
    audiences: &[String],
    leeway_secs: u64,
) -> Validation {
    let mut validation = Validation::new(algorithm);
    validation.leeway = leeway_secs;
    validation.validate_nbf = true;
    validation.set_issuer(&[issuer]);
    validation.set_audience(audiences);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation
}

/// The token's claims, if one of `keys` signed it and its claims pass `checks`; `audience`
/// names this resource in a refusal.
pub(crate) fn verify<'k>(
    token: &str,
    keys: impl Iterator<Item = &'k DecodingKey>,
    checks: &Validation,
    audience: &str,
) -> Result<Map<String, Value>, IdentityError> {
    let mut refusal = IdentityError::UnknownKey;
    for key in keys {
        match jsonwebtoken::decode::<Map<String, Value>>(token, key, checks) {
            Ok(data) => return Ok(data.claims),
            Err(error) => {
                refusal = refused(error.kind(), audience);
                // Another key of a token naming none might have signed it; any other
                // failure is the token's.
                if refusal != IdentityError::BadSignature {
                    return Err(refusal);
                }
            }
        }
    }
    Err(refusal)
}

fn refused(kind: &ErrorKind, audience: &str) -> IdentityError {
    match kind {
        ErrorKind::InvalidSignature => IdentityError::BadSignature,
        ErrorKind::ExpiredSignature => IdentityError::Expired,
        ErrorKind::ImmatureSignature => IdentityError::NotYetValid,
        ErrorKind::InvalidIssuer => IdentityError::UntrustedIssuer,
        ErrorKind::InvalidAudience => IdentityError::WrongAudience {
            expected: audience.to_owned(),
        },
        ErrorKind::MissingRequiredClaim(claim) => IdentityError::MissingClaim(claim.clone()),
        ErrorKind::InvalidClaimFormat(claim) => IdentityError::MissingClaim(claim.clone()),
        ErrorKind::InvalidAlgorithm => IdentityError::AlgorithmNotAllowed(
            "an algorithm that does not fit the issuer's key".to_owned(),
        ),
        _ => IdentityError::Malformed("its signature or claims could not be decoded"),
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::Algorithm;

    use super::{looks_like_jwt, peek};
    use crate::identity::IdentityError;

    fn part(json: &str) -> String {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    #[test]
    fn none_and_symmetric_algorithms_are_refused_before_any_key_is_looked_for() {
        let accepted = [Algorithm::RS256, Algorithm::ES256];
        let claims = part(r#"{"iss":"https://id.example.com","sub":"x"}"#);
        let none = format!("{}.{claims}.", part(r#"{"alg":"none"}"#));
        assert!(matches!(
            peek(&none, &accepted),
            Err(IdentityError::Malformed(_))
        ));
        let hs = format!("{}.{claims}.c2ln", part(r#"{"alg":"HS256"}"#));
        assert_eq!(
            peek(&hs, &accepted).err(),
            Some(IdentityError::AlgorithmNotAllowed("HS256".into()))
        );
        let rs = format!(
            "{}.{claims}.c2ln",
            part(r#"{"alg":"RS256","kid":"k","jku":"https://evil.example"}"#)
        );
        let seen = peek(&rs, &accepted).unwrap();
        assert_eq!(seen.issuer, "https://id.example.com");
        assert_eq!(seen.header.kid.as_deref(), Some("k"));
    }

    #[test]
    fn opaque_tokens_are_told_from_jwts() {
        assert!(looks_like_jwt("eyJh.eyJz.c2ln"));
        assert!(!looks_like_jwt(
            "ZuFM_bZApgpBsBrN6b8aL4a0tTMalZqjas3cvLRqep4"
        ));
        assert!(!looks_like_jwt("a.b.c.d"));
        assert!(!looks_like_jwt("a b.c.d"));
    }
}
