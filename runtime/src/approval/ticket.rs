//! Approval tickets: `base64url(claims JSON) . base64url(HMAC-SHA256)`, bound to the
//! caller, tool, call id and a hash of the arguments, with an expiry.

use crate::util::digest::hex_digest;
use std::fmt;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

use crate::util::time::now_secs;

type HmacSha256 = Hmac<Sha256>;

/// What a ticket says about the call it approves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TicketClaims {
    /// Random id, also the key of the pending call.
    pub(crate) id: String,
    pub(crate) caller: String,
    pub(crate) tool: String,
    pub(crate) call_id: String,
    /// HMAC-SHA256 of the arguments' JSON text under the signing key, hex: binds the ticket
    /// to the arguments without letting a ticket holder guess a secret argument from a
    /// plain hash.
    pub(crate) arguments: String,
    /// Expiry, seconds since the Unix epoch.
    pub(crate) expires: u64,
}

/// Why a ticket was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TicketError {
    /// Not a ticket of this registry: malformed or its signature does not match.
    Invalid,
    /// Past its expiry.
    Expired,
    /// No pending call that this approver may decide: already redeemed, its call is gone, or
    /// the approver's role may not decide it (the same answer, so a ticket reveals nothing
    /// to an approver who may not see its tool).
    AlreadyUsed,
    /// The pending call does not match what the ticket was signed for.
    Mismatch,
    /// The store of pending calls could not be reached; nothing was decided. Try again.
    StoreUnavailable,
}

impl fmt::Display for TicketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TicketError::Invalid => {
                "the approval ticket is not valid (malformed, or not signed by this application)"
            }
            TicketError::Expired => "the approval ticket has expired; the call must be made again",
            TicketError::AlreadyUsed => {
                "no call that you may decide is waiting for this ticket: it was decided already, or it is not yours to decide"
            }
            TicketError::Mismatch => {
                "the approval ticket does not match the call it is presented for"
            }
            TicketError::StoreUnavailable => {
                "the store of waiting calls is unavailable, so nothing was decided; try again later"
            }
        })
    }
}

impl std::error::Error for TicketError {}

/// Signs and checks tickets with one secret key.
pub(crate) struct TicketSigner {
    key: Vec<u8>,
    lifetime: Duration,
}

impl TicketSigner {
    /// A signer with a given key (shared by the processes that redeem each other's
    /// tickets), or a random one (tickets then die with the process).
    pub(crate) fn new(key: Option<Vec<u8>>, lifetime: Duration) -> Self {
        let key = key.unwrap_or_else(|| random_bytes::<32>().to_vec());
        TicketSigner { key, lifetime }
    }

    pub(crate) fn issue(
        &self,
        caller: &str,
        tool: &str,
        call_id: &str,
        arguments: &Value,
    ) -> (String, TicketClaims) {
        let claims = TicketClaims {
            id: hex_digest(&random_bytes::<16>()),
            caller: caller.to_owned(),
            tool: tool.to_owned(),
            call_id: call_id.to_owned(),
            arguments: self.arguments_digest(arguments),
            expires: now_secs() + self.lifetime.as_secs(),
        };
        (self.seal(&claims), claims)
    }

    /// The claims of a genuine, unexpired ticket.
    pub(crate) fn verify(&self, ticket: &str) -> Result<TicketClaims, TicketError> {
        let claims: TicketClaims = self.open(ticket)?;
        if claims.expires <= now_secs() {
            return Err(TicketError::Expired);
        }
        Ok(claims)
    }

    /// `claims` signed: `base64url(JSON) . base64url(HMAC-SHA256)` (readable, not secret).
    pub(crate) fn seal(&self, claims: &impl Serialize) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap_or_default());
        let signature =
            URL_SAFE_NO_PAD.encode(self.mac(payload.as_bytes()).finalize().into_bytes());
        format!("{payload}.{signature}")
    }

    /// The claims of a value [`seal`](Self::seal)ed with this key; anything else, or a value
    /// changed by a single bit, is `Invalid`.
    pub(crate) fn open<T: serde::de::DeserializeOwned>(
        &self,
        sealed: &str,
    ) -> Result<T, TicketError> {
        let (payload, signature) = sealed.split_once('.').ok_or(TicketError::Invalid)?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| TicketError::Invalid)?;
        // Constant-time comparison.
        self.mac(payload.as_bytes())
            .verify_slice(&signature)
            .map_err(|_| TicketError::Invalid)?;
        let claims = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| TicketError::Invalid)?;
        serde_json::from_slice(&claims).map_err(|_| TicketError::Invalid)
    }

    /// How long tickets (and other sealed states) live.
    pub(crate) fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// The keyed digest of a call's arguments that a ticket carries.
    pub(crate) fn arguments_digest(&self, arguments: &Value) -> String {
        hex_digest(
            &self
                .mac(arguments.to_string().as_bytes())
                .finalize()
                .into_bytes(),
        )
    }

    fn mac(&self, data: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(data);
        mac
    }
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    bytes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_ticket_verifies_and_a_changed_one_does_not() {
        let signer = TicketSigner::new(Some(b"key".to_vec()), Duration::from_secs(60));
        let (ticket, claims) = signer.issue("u1", "delete", "c1", &json!({"id": 1}));
        assert_eq!(signer.verify(&ticket).unwrap(), claims);
        let other = TicketSigner::new(Some(b"other key".to_vec()), Duration::from_secs(60));
        assert_eq!(other.verify(&ticket), Err(TicketError::Invalid));
        // Claims edited to another caller, signature kept: refused.
        let (payload, signature) = ticket.split_once('.').unwrap();
        let mut edited: TicketClaims =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        edited.caller = "attacker".into();
        let forged = format!(
            "{}.{signature}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&edited).unwrap())
        );
        assert_eq!(signer.verify(&forged), Err(TicketError::Invalid));
        assert_eq!(signer.verify("garbage"), Err(TicketError::Invalid));
        assert_eq!(signer.verify(""), Err(TicketError::Invalid));
    }
}
