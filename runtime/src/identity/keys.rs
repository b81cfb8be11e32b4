//! An issuer's signing keys (its JWKS), as last fetched. Only asymmetric signing keys are
//! kept: an `oct` (shared secret) key or an encryption key in the set is left out, so no
//! token can be checked with a public key posing as an HMAC secret.

use std::time::Instant;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;
use serde_json::Value;

/// The keys of one fetch.
pub(crate) struct KeySet {
    keys: Vec<Key>,
    /// When they were fetched.
    pub(crate) fetched: Instant,
}

/// One signing key.
struct Key {
    id: Option<String>,
    /// The one algorithm the key is for, when the set says.
    algorithm: Option<Algorithm>,
    kind: Kind,
    decoding: DecodingKey,
}

/// Which algorithms a key can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rsa,
    P256,
    P384,
    Ed25519,
}

/// A JWKS as published: each key read on its own, so one key of a kind toolgate does not
/// use leaves the others usable.
#[derive(Deserialize)]
struct Published {
    keys: Vec<Value>,
}

impl KeySet {
    /// The signing keys of a published JWKS; an answer holding none is refused.
    pub(crate) fn read(published: Value) -> Result<KeySet, String> {
        let published: Published = serde_json::from_value(published)
            .map_err(|_| "its key set is not a JWKS (`{\"keys\": [...]}`)".to_owned())?;
        let keys: Vec<Key> = published
            .keys
            .into_iter()
            .filter_map(|value| serde_json::from_value::<Jwk>(value).ok())
            .filter_map(Key::signing)
            .collect();
        if keys.is_empty() {
            return Err("its key set holds no asymmetric signing key".to_owned());
        }
        Ok(KeySet {
            keys,
            fetched: Instant::now(),
        })
    }

    /// The keys that may have signed a token with this `kid` and algorithm: the key of that
    /// id, or, for a token naming none, every key that fits the algorithm.
    pub(crate) fn candidates<'a>(
        &'a self,
        kid: Option<&'a str>,
        algorithm: Algorithm,
    ) -> impl Iterator<Item = &'a DecodingKey> + 'a {
        self.keys
            .iter()
            .filter(move |key| match kid {
                Some(kid) => key.id.as_deref() == Some(kid),
                None => true,
            })
            .filter(move |key| key.fits(algorithm))
            .map(|key| &key.decoding)
    }

    /// Whether a key of this id is in the set (whatever its algorithm).
    #[cfg(test)]
    fn has(&self, kid: &str) -> bool {
        self.keys.iter().any(|key| key.id.as_deref() == Some(kid))
    }
}

impl Key {
    /// The key, if it is an asymmetric key for signatures.
    fn signing(jwk: Jwk) -> Option<Key> {
        if matches!(
            jwk.common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) {
            return None;
        }
        let kind = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => Kind::Rsa,
            AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
                EllipticCurve::P256 => Kind::P256,
                EllipticCurve::P384 => Kind::P384,
                _ => return None,
            },
            AlgorithmParameters::OctetKeyPair(okp) => match okp.curve {
                EllipticCurve::Ed25519 => Kind::Ed25519,
                _ => return None,
            },
            _ => return None,
        };
        // A key for an algorithm that is not a signature's (`RSA-OAEP`) is not kept.
        let algorithm = match jwk.common.key_algorithm {
            Some(named) => Some(named.to_string().parse::<Algorithm>().ok()?),
            None => None,
        };
        let decoding = DecodingKey::from_jwk(&jwk).ok()?;
        Some(Key {
            id: jwk.common.key_id,
            algorithm,
            kind,
            decoding,
        })
    }

    /// Whether the key can check a signature made with `algorithm`.
    fn fits(&self, algorithm: Algorithm) -> bool {
        if self.algorithm.is_some_and(|own| own != algorithm) {
            return false;
        }
        use Algorithm::*;
        match self.kind {
            Kind::Rsa => matches!(algorithm, RS256 | RS384 | RS512 | PS256 | PS384 | PS512),
            Kind::P256 => algorithm == ES256,
            Kind::P384 => algorithm == ES384,
            Kind::Ed25519 => algorithm == EdDSA,
        }
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::Algorithm;
    use serde_json::json;

    use super::KeySet;

    const RSA_N: &str = "u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0_IzW7yWR7QkrmBL7jTKEn5u-qKhbwKfBstIs-bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW_VDL5AaWTg0nLVkjRo9z-40RQzuVaE8AkAFmxZzow3x-VJYKdjykkJ0iT9wCS0DRTXu269V264Vf_3jvredZiKRkgwlL9xNAwxXFg0x_XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC-9aGVd-Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmw";

    #[test]
    fn only_asymmetric_signing_keys_are_kept() {
        let published = json!({"keys": [
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": RSA_N, "e": "AQAB"},
            {"kty": "RSA", "kid": "sig", "alg": "RS256", "n": RSA_N, "e": "AQAB"},
            {"kty": "weird"},
        ]});
        let set = KeySet::read(published).unwrap();
        assert!(set.has("sig"));
        assert!(!set.has("secret"));
        assert!(!set.has("enc"));
        assert_eq!(set.candidates(Some("sig"), Algorithm::RS256).count(), 1);
        // The key says RS256: a token claiming PS256 with it is not checked with it.
        assert_eq!(set.candidates(Some("sig"), Algorithm::PS256).count(), 0);
        assert_eq!(set.candidates(Some("sig"), Algorithm::ES256).count(), 0);
        assert_eq!(set.candidates(None, Algorithm::RS256).count(), 1);
    }

    #[test]
    fn a_set_without_signing_keys_is_refused() {
        let only_secret = json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]});
        let refused = KeySet::read(only_secret).err().unwrap();
        assert!(refused.contains("no asymmetric"), "{refused}");
        assert!(KeySet::read(json!({"not": "keys"})).is_err());
    }
}
