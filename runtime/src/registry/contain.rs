//! Keeping a tool's panic inside: also the one thrown while its future is dropped (at a
//! timeout, a cancellation, or when whoever awaits the call stops waiting).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::FutureExt;

use crate::error::{ErrorCode, ToolError};

/// A future whose drop never unwinds: a panic while dropping the inner future is logged and
/// stops there.
pub(crate) struct ContainedDrop<'a, F: Future + Unpin> {
    tool: &'a str,
    inner: Option<F>,
}

impl<'a, F: Future + Unpin> ContainedDrop<'a, F> {
    pub(crate) fn new(tool: &'a str, inner: F) -> Self {
        ContainedDrop {
            tool,
            inner: Some(inner),
        }
    }

    /// The future, no longer contained by this (to be contained again where it goes).
    pub(crate) fn into_inner(mut self) -> F {
        self.inner
            .take()
            .expect("a contained future is there until dropped")
    }
}

impl<F: Future + Unpin> Future for ContainedDrop<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.inner.as_mut() {
            Some(inner) => inner.poll_unpin(cx),
            None => Poll::Pending,
        }
    }
}

impl<F: Future + Unpin> Drop for ContainedDrop<'_, F> {
    fn drop(&mut self) {
        let inner = self.inner.take();
        if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(inner))) {
            tracing::error!(
                tool = self.tool,
                panic = %panic_text(payload.as_ref()),
                "tool panicked while being stopped; the panic was contained"
            );
        }
    }
}

/// Runs application code the registry calls on a call's path (a policy, a tool's review, an
/// audit sink): a panic in it is logged and becomes `None`, so the call still gets an answer
/// and the registry keeps serving.
// Inlined where a call passes; the logging of a panic is not.
#[inline]
pub(crate) fn contained<T>(what: &str, tool: &str, work: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(value) => Some(value),
        Err(payload) => {
            log_contained(what, tool, payload.as_ref());
            None
        }
    }
}

#[cold]
#[inline(never)]
fn log_contained(what: &str, tool: &str, payload: &(dyn Any + Send)) {
    tracing::error!(tool, panic = %panic_text(payload), "{what} panicked; the panic was contained");
}

/// A panic's message, for the log.
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic payload".to_owned())
}

/// A contained panic: its text goes to the log (it may hold internals), not to the model.
pub(crate) fn contained_panic(tool: &str, payload: Box<dyn Any + Send>, what: &str) -> ToolError {
    log_contained(what, tool, payload.as_ref());
    ToolError::new(
        ErrorCode::Panicked,
        format!(
            "{what} failed unexpectedly (an internal error, not a problem with your arguments)"
        ),
    )
}
