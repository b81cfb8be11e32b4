//! Where a call enters its path.

/// Where a call enters the path: at the start ([`AtStart`]), or, for a call a person
/// approved ([`Approved`]), with its decision made, found and read again first (the tool
/// may have changed since). A type, not a value: the path of the usual call pays nothing for
/// the other.
pub(crate) trait Entrance: Copy {
    /// Whether the call enters with its approval.
    const APPROVED: bool;

    /// Who approved it.
    fn approver(&self) -> Option<&str>;
}

/// A call's usual entrance: at the start of the path.
#[derive(Clone, Copy)]
pub(crate) struct AtStart;

impl Entrance for AtStart {
    const APPROVED: bool = false;

    fn approver(&self) -> Option<&str> {
        None
    }
}

/// The entrance of a call that the approver with this id approved.
#[derive(Clone, Copy)]
pub(crate) struct Approved<'a>(pub(crate) &'a str);

impl Entrance for Approved<'_> {
    const APPROVED: bool = true;

    fn approver(&self) -> Option<&str> {
        Some(self.0)
    }
}
