//! Answering before a request's body is read. The client may still be sending it: an answer
//! sent now, and the connection closed under the unread rest, reaches it as a broken pipe
//! or a reset instead of the error that says what to fix ("sign in", "send JSON", "the
//! body is too large"). So what is left of the body is read first, a bounded amount for a
//! bounded time, and then the answer is sent.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use http_body::{Frame, SizeHint};
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

/// `body`, watched on its way into a service that may answer without reading it (rmcp's
/// checks of `Host`, `Origin`, media type and method do). What the service drops unread is
/// kept in the [`Unread`] returned, for [`Unread::read_before`] to read before its answer.
pub(crate) fn watched(body: Body) -> (Body, Unread) {
    let unread = Unread(Arc::default());
    let watched = Watched {
        body: Some(body),
        unread: Arc::clone(&unread.0),
    };
    (Body::new(watched), unread)
}

/// What a service dropped of a [`watched`] body without reading it to its end.
pub(crate) struct Unread(Arc<Mutex<Option<Body>>>);

impl Unread {
    /// `answer`, once what the service left of the body is read (nothing to wait for when
    /// it read the whole body, or still holds it).
    pub(crate) async fn read_before(self, answer: Response) -> Response {
        let left = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        match left {
            Some(body) => after_reading(body, answer).await,
            None => answer,
        }
    }
}

struct Watched {
    body: Option<Body>,
    unread: Arc<Mutex<Option<Body>>>,
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        match self.body.as_mut() {
            Some(body) => Pin::new(body).poll_frame(context),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body
            .as_ref()
            .is_none_or(http_body::Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.body
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), http_body::Body::size_hint)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(body) = self
            .body
            .take()
            .filter(|body| !http_body::Body::is_end_stream(body))
        {
            *self.unread.lock().unwrap_or_else(PoisonError::into_inner) = Some(body);
        }
    }
}
