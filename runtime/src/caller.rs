//! Who is calling: an id and a role.

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
/// ```
/// use toolgate::Caller;
///
/// let caller = Caller::new("user-42", "customer");
/// assert_eq!(caller.id(), "user-42");
/// assert_eq!(caller.role(), "customer");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(from = "Kept")]
pub struct Caller {
    id: SmolStr,
    role: SmolStr,
    /// Whether the id holds no control character (worked out once, here).
    #[serde(skip_serializing)]
    storable: bool,
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
        let storable = !id.chars().any(char::is_control);
        Caller {
            id,
            role: role.into(),
            storable,
        }
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
        self.storable
    }

    /// The caller's id as it is kept (to share, not copy, where a record keeps it).
    #[inline(always)]
    pub(crate) fn id_text(&self) -> &SmolStr {
        &self.id
    }

    /// The id as records keep it: as it is, or escaped when it holds control characters.
    #[cold]
    pub(crate) fn recorded_id(&self) -> SmolStr {
        match self.storable {
            true => self.id.clone(),
            false => self.id.escape_debug().to_string().into(),
        }
    }

    /// The caller's role as it is kept.
    pub(crate) fn role_text(&self) -> &SmolStr {
        &self.role
    }
}
