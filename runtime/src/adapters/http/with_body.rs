//! Handlers of the caller and a JSON body that take the router's state as axum hands it
//! over, instead of through the `State` extractor, and whose future holds only what is
//! still to be done.
//!
//! `State` clones the state (an `Arc`) once more for the handler, and drops the clone at
//! the end: two more changes of a counter that every request touches, from every worker
//! thread, so that its cache line moves between cores on each of them.
//!
//! Extractors each keep the request, or its head, in the handler's future until they are
//! done. Here the head is read before the future is made: the authentication hook is
//! asked (its answer awaited in the future, if it has to look the caller up), and whether
//! the body is declared JSON is noted. The future, allocated per request, holds the body
//! and the answer, not the request's 240 bytes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::Request;
use axum::handler::Handler;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use crate::adapters::http::Shared;
use crate::adapters::http::errors::ApiError;
use crate::adapters::http::extract::{declares_json, not_json, not_let_in, read_within};
use crate::adapters::http::unread::after_reading;
use crate::caller::Caller;

/// `handler(shared, caller, body)` as an axum handler: the caller as the application's
/// authentication identified it, and the body if it is declared JSON and within the
/// router's limit (each refused with its own error, in that order, as the `CallerAndBody`
/// extractor would).
#[derive(Clone, Copy)]
pub(crate) struct WithBody<F>(pub(crate) F);

impl<F, Answering> Handler<(), Arc<Shared>> for WithBody<F>
where
    F: FnOnce(Arc<Shared>, Caller, Bytes) -> Answering + Clone + Send + Sync + 'static,
    Answering: Future<Output = Result<Response, ApiError>> + Send + 'static,
{
    // Boxed, as axum boxes the future of a handler written as an `async fn`.
    type Future = Pin<Box<dyn Future<Output = Response> + Send>>;

    fn call(self, request: Request, shared: Arc<Shared>) -> Self::Future {
        let (parts, body) = request.into_parts();
        // A panic in the hook is caught by `Caught`, which wraps this call too.
        let identified = shared.auth.authenticate(&parts);
        let json = declares_json(parts.headers.get(CONTENT_TYPE));
        drop(parts);
        Box::pin(async move {
            // The steps of `extract::admit`, written out: its future nested in this one cost
            // about 90 instructions a request (`http_instructions`).
            let caller = match identified.await {
                Ok(caller) => caller,
                Err(refused) => return after_reading(body, not_let_in(refused)).await,
            };
            if !json {
                return after_reading(body, not_json().into_response()).await;
            }
            let body = match read_within(body, shared.options.body_limit).await {
                Ok(body) => body,
                Err(refused) => return refused.into_response(),
            };
            match (self.0)(shared, caller, body).await {
                Ok(response) => response,
                Err(error) => error.into_response(),
            }
        })
    }
}
