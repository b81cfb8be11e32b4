//! A call's cancellation, where its caller can cancel it: a call nobody can cancel makes no
//! token (one costs an allocation and a lock per call).

use crate::context::CancellationToken;

/// The caller's token, if it gave one.
#[derive(Clone, Copy, Default)]
pub(crate) struct Cancel<'a>(pub(crate) Option<&'a CancellationToken>);

impl Cancel<'_> {
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.is_some_and(CancellationToken::is_cancelled)
    }

    /// Done when the call is cancelled; never, if it cannot be.
    pub(crate) async fn cancelled(&self) {
        match self.0 {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// A token cancelled with the call, for application code to watch: a child, so that
    /// whoever holds it cannot cancel the call itself.
    pub(crate) fn child(&self) -> CancellationToken {
        self.0
            .map(CancellationToken::child_token)
            .unwrap_or_default()
    }
}
