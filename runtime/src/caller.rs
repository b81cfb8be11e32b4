//! Who is calling: an id and a role, and, for a caller identified by a token, its issuer
//! and claims.

use std::sync::Arc;

use serde_json::{Map, Value};
use smol_str::SmolStr;

/// The identity a call is made for. Cheap to clone: an id or role of up to 23 bytes is kept
/// inline, so a clone copies it instead of counting a reference every thread shares.
///
/// The role decides which tools the caller sees and may run; the id is for the tools
/// themselves (a tool may take `#[ctx] caller: Caller`), for grants, limits and logs.
///
/// An id holding a control character (NUL, a line break, ...) cannot be kept by every
/// store (PostgreSQL refuses NUL) nor written on one log line: a registry refuses such a
/// caller everything, as it does a caller of an unknown role, and its refusals are recorded
/// with the id escaped (`ada\u{0}`).
///
/// A caller identified by a token ([`identity`](crate::identity), or the application's own
/// check) also carries the token's issuer and claims ([`with_identity`](Caller::with_identity)),
/// for the application's rules over them. They are facts of the caller presenting now: stores
/// keep only the id and the role, and a caller is equal to another with the same id, role
/// and issuer. Its `Debug` names the claims, never their values.
///
/// ```
/// use toolgate::Caller;
///
/// let caller = Caller::new("user-42", "customer");
/// assert_eq!(caller.id(), "user-42");
/// assert_eq!(caller.role(), "customer");
/// assert_eq!(caller.issuer(), None);
/// ```
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(from = "Kept")]
pub struct Caller {
    id: SmolStr,
    role: SmolStr,
    /// What most callers do not have: one pointer, absent for a caller of a storable id
    /// without a token (so the caller is as small, and as quick to copy, as its two names).
    #[serde(skip_serializing)]
    more: Option<Arc<More>>,
}

/// A caller's less common facts.
struct More {
    /// The id holds a control character (worked out once, in [`Caller::new`]).
    unstorable: bool,
    /// What a token said of its bearer.
    token: Option<TokenFacts>,
}

/// What a token said of its bearer.
struct TokenFacts {
    issuer: SmolStr,
    claims: Map<String, Value>,
}

impl PartialEq for Caller {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.role == other.role && self.issuer() == other.issuer()
    }
}

impl Eq for Caller {}

impl std::hash::Hash for Caller {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
        self.role.hash(state);
        self.issuer().hash(state);
    }
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = formatter.debug_struct("Caller");
        shown.field("id", &self.id).field("role", &self.role);
        if let Some(token) = self.token() {
            let names: Vec<&str> = token.claims.keys().map(String::as_str).collect();
            shown.field("issuer", &token.issuer).field("claims", &names);
        }
        shown.finish()
    }
}

/// A caller as stores keep it.
#[derive(serde::Deserialize)]
struct Kept {
    id: SmolStr,
    role: SmolStr,
}

impl From<Kept> for Caller {
    fn from(kept: Kept) -> Self {
        Caller::new(kept.id, kept.role)
    }
}

impl Caller {
    /// A caller with an id and a role name from the registry's hierarchy.
    pub fn new(id: impl Into<SmolStr>, role: impl Into<SmolStr>) -> Self {
        let id = id.into();
        let unstorable = id.chars().any(char::is_control);
        Caller {
            id,
            role: role.into(),
            more: unstorable.then(|| {
                Arc::new(More {
                    unstorable,
                    token: None,
                })
            }),
        }
    }

    /// The same caller, identified by a token of `issuer` holding `claims`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolgate::Caller;
    ///
    /// let claims = json!({"sub": "ana", "groups": ["vets"]});
    /// let caller = Caller::new("ana", "staff")
    ///     .with_identity("https://id.example.com", claims.as_object().unwrap().clone());
    /// assert_eq!(caller.issuer(), Some("https://id.example.com"));
    /// assert_eq!(caller.claim("groups"), Some(&json!(["vets"])));
    /// ```
    pub fn with_identity(mut self, issuer: impl Into<SmolStr>, claims: Map<String, Value>) -> Self {
        let token = TokenFacts {
            issuer: issuer.into(),
            claims,
        };
        self.more = Some(Arc::new(More {
            unstorable: !self.id_is_storable(),
            token: Some(token),
        }));
        self
    }

    fn token(&self) -> Option<&TokenFacts> {
        self.more.as_ref().and_then(|more| more.token.as_ref())
    }

    /// The issuer of the token that identified the caller, if a token did.
    pub fn issuer(&self) -> Option<&str> {
        self.token().map(|token| token.issuer.as_str())
    }

    /// Every claim of the token that identified the caller, if a token did.
    pub fn claims(&self) -> Option<&Map<String, Value>> {
        self.token().map(|token| &token.claims)
    }

    /// One claim of the caller's token.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims().and_then(|claims| claims.get(name))
    }

    /// The caller's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The caller's role.
    pub fn role(&self) -> &str {
        &self.role
    }

    /// Whether every store can keep the id and a log line can show it: no control
    /// characters. A registry refuses a caller whose id is not.
    #[inline(always)]
    pub(crate) fn id_is_storable(&self) -> bool {
        self.more.as_ref().is_none_or(|more| !more.unstorable)
    }

    /// The caller's id as it is kept (to share, not copy, where a record keeps it).
    #[inline(always)]
    pub(crate) fn id_text(&self) -> &SmolStr {
        &self.id
    }

    /// The id as records keep it: as it is, or escaped when it holds control characters.
    #[cold]
    pub(crate) fn recorded_id(&self) -> SmolStr {
        match self.id_is_storable() {
            true => self.id.clone(),
            false => self.id.escape_debug().to_string().into(),
        }
    }

    /// The issuer as records keep it.
    #[inline(always)]
    pub(crate) fn issuer_text(&self) -> Option<&SmolStr> {
        self.token().map(|token| &token.issuer)
    }

    /// The caller's role as it is kept.
    pub(crate) fn role_text(&self) -> &SmolStr {
        &self.role
    }
}
