//! Small helpers every part uses: bounded quoting, digests, locks that survive a panic,
//! and time.

pub(crate) mod bounded;
#[cfg(feature = "axum")]
pub(crate) mod call_ids;
pub(crate) mod digest;
pub(crate) mod sync;
pub(crate) mod time;
