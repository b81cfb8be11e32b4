//! A panic in a handler — in the application's authentication hook, say, which runs in its
//! extractor or as the handler starts — answered as a JSON `500` instead of a dropped
//! connection.
//!
//! The handler's own future catches it. A router layer would do the same, but axum boxes
//! every request's future once more for each layer; this wrapper adds no allocation.

use std::panic::AssertUnwindSafe;

use axum::extract::Request;
use axum::handler::Handler;
use axum::response::Response;
use futures::FutureExt;
use futures::future::{CatchUnwind, Either, Map, Ready, ready};

use crate::adapters::http::errors::panic_response;

/// `handler`, answering a panic with [`panic_response`].
#[derive(Clone, Copy)]
pub(crate) struct Caught<H>(pub(crate) H);

type Outcome = std::thread::Result<Response>;

type Answering<F> = Map<CatchUnwind<AssertUnwindSafe<F>>, fn(Outcome) -> Response>;

impl<H, T, S> Handler<T, S> for Caught<H>
where
    H: Handler<T, S>,
    S: Send + 'static,
{
    /// The handler's future, or the answer to a panic while it was made.
    type Future = Either<Answering<H::Future>, Ready<Response>>;

    fn call(self, request: Request, state: S) -> Self::Future {
        // Unwind safety: a panicking request's state is dropped with it; what it shares
        // (the registry, the stores) keeps its own invariants under panics, as the
        // registry's containment of tools requires anyway.
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| self.0.call(request, state)));
        match started {
            Ok(future) => Either::Left(
                AssertUnwindSafe(future)
                    .catch_unwind()
                    .map(answered as fn(Outcome) -> Response),
            ),
            Err(payload) => Either::Right(ready(panic_response(payload))),
        }
    }
}

fn answered(outcome: Outcome) -> Response {
    outcome.unwrap_or_else(panic_response)
}
