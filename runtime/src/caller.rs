//! Who is calling: an id and a role.

use smol_str::SmolStr;

/// The identity a call is made for. Cheap to clone: an id or role of up to 23 bytes is kept
/// inline, so a clone copies it instead of counting a reference every thread shares.
///
/// The role decides which tools the caller sees and may run; the id is for the tools
/// themselves (a tool may take `#[ctx] caller: Caller`) and for logs.
///
/// ```
/// use toolgate::Caller;
///
/// let caller = Caller::new("user-42", "customer");
/// assert_eq!(caller.id(), "user-42");
/// assert_eq!(caller.role(), "customer");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Caller {
    id: SmolStr,
    role: SmolStr,
}

impl Caller {
    /// A caller with an id and a role name from the registry's hierarchy.
    pub fn new(id: impl Into<SmolStr>, role: impl Into<SmolStr>) -> Self {
        Caller {
            id: id.into(),
            role: role.into(),
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

    /// The caller's id as it is kept (to share, not copy, where a record keeps it).
    pub(crate) fn id_text(&self) -> &SmolStr {
        &self.id
    }

    /// The caller's role as it is kept.
    pub(crate) fn role_text(&self) -> &SmolStr {
        &self.role
    }
}
