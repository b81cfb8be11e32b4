//! MCP messages as WebSocket text frames, one JSON-RPC message per frame, for either end of
//! a device link: the hub (an MCP client) and the device (its server).

use futures::{Sink, SinkExt, Stream, StreamExt};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};

/// The largest frame either end accepts: a tool list or a result bigger than this is refused
/// (the link closes with an error) instead of being held in memory.
pub(super) const MAX_FRAME: usize = 16 * 1024 * 1024;

/// A frame's text read as a message for `R`; a frame that is none (malformed JSON, or a
/// message of no kind `R` receives) is dropped with a warning, and the link goes on.
pub(super) fn message_of<R: ServiceRole>(side: &str, text: &str) -> Option<RxJsonRpcMessage<R>> {
    match serde_json::from_str(text) {
        Ok(message) => Some(message),
        Err(error) => {
            tracing::warn!(side, %error, "a device link frame that is no MCP message was dropped");
            None
        }
    }
}

/// A message as a frame's text.
pub(super) fn text_of<R: ServiceRole>(message: &TxJsonRpcMessage<R>) -> String {
    // Messages are made of JSON values and strings: serializing them cannot fail.
    serde_json::to_string(message).unwrap_or_default()
}

/// The (sink, stream) pair rmcp runs a service over, from a WebSocket's frames: `text`
/// reads a frame's text (`None` for pings and other control frames), `frame` makes one,
/// and `heard` is told of every frame that arrives, pings included.
pub(super) fn transport<R, Ws, M, E>(
    side: &'static str,
    socket: Ws,
    (text, frame): (fn(M) -> Option<String>, fn(String) -> M),
    heard: impl Fn() + Send + 'static,
) -> (
    impl Sink<TxJsonRpcMessage<R>, Error = E> + Send + Unpin + 'static,
    impl Stream<Item = RxJsonRpcMessage<R>> + Send + Unpin + 'static,
)
where
    R: ServiceRole,
    Ws: Stream<Item = Result<M, E>> + Sink<M, Error = E> + Send + 'static,
    M: Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let (sink, stream) = socket.split();
    let sink = sink.with(move |message: TxJsonRpcMessage<R>| {
        futures::future::ready(Ok::<M, E>(frame(text_of::<R>(&message))))
    });
    // The stream ends at the first error: a broken link is a closed one.
    let stream = stream
        .take_while(|frame| futures::future::ready(frame.is_ok()))
        .filter_map(move |frame| {
            heard();
            let message = frame
                .ok()
                .and_then(text)
                .and_then(|t| message_of::<R>(side, &t));
            futures::future::ready(message)
        });
    (Box::pin(sink), Box::pin(stream))
}
