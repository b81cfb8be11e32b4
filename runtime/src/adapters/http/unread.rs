//! Answering before a request's body is read. The client may still be sending it: an answer
//! sent now, and the connection closed under the unread rest, reaches it as a broken pipe
//! or a reset instead of the error that says what to fix ("sign in", "send JSON", "the
//! body is too large"). So what is left of the body is read first, a bounded amount for a
//! bounded time, and then the answer is sent.

use std::pin::Pin;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http_body_util::BodyExt;

/// The most of an unread body read (and thrown away) before the answer.
const MOST: usize = 1 << 20;
/// The longest wait for it: a client that stops sending does not hold the answer up.
const LONGEST: Duration = Duration::from_secs(2);

/// `answer`, once what is left of `body` has been read (within the bounds above). Boxed,
/// as [`discard_rest`] is.
pub(crate) fn after_reading(body: Body, answer: Response) -> Refusing<Response> {
    Box::pin(async move {
        discard(body).await;
        answer
    })
}

/// Reads what is left of `body` (within the bounds above) and drops it. Boxed: a refusal is
/// the rare path, and its timer would otherwise enlarge the future of every request whose
/// handler might refuse (allocated, and moved, per request).
pub(crate) fn discard_rest(body: Body) -> Refusing<()> {
    Box::pin(discard(body))
}

/// The future of a refusal that reads the body first.
pub(crate) type Refusing<T> = Pin<Box<dyn Future<Output = T> + Send>>;

async fn discard(mut body: Body) {
    let reading = async {
        let mut read = 0;
        while read < MOST {
            match body.frame().await {
                Some(Ok(frame)) => read += frame.data_ref().map_or(0, |data| data.len()),
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(LONGEST, reading).await;
}
