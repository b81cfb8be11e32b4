//! MCP messages as WebSocket text frames, one JSON-RPC message per frame, for either end of
//! a device link: the hub (an MCP client) and the device (its server).

use futures::channel::mpsc::{self, SendError};
use futures::{Sink, SinkExt, Stream, StreamExt};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};

/// The largest frame either end accepts: a tool list or a result bigger than this is refused
/// (the link closes with an error) instead of being held in memory.
pub(super) const MAX_FRAME: usize = 16 * 1024 * 1024;

/// What a frame's text is, for the end `R`.
enum Read<R: ServiceRole> {
    /// A message to pass on.
    Message(RxJsonRpcMessage<R>),
    /// A request this end does not serve: answered with an error, passed on to no one.
    Refused(String),
    /// Not an MCP message: dropped with a warning, and the link goes on.
    Dropped,
}

/// Reads a frame's text; `serves` says which requests of the other end this end answers.
fn read<R: ServiceRole>(side: &str, text: &str, serves: fn(&str) -> bool) -> Read<R> {
    let value = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => value,
        Err(error) => {
            tracing::warn!(side, %error, "a device link frame that is not JSON was dropped");
            return Read::Dropped;
        }
    };
    let method = value.get("method").and_then(|m| m.as_str());
    if let (Some(id), Some(method)) = (value.get("id"), method)
        && !serves(method)
    {
        return Read::Refused(refusal(id, method));
    }
    match serde_json::from_value(value) {
        Ok(message) => Read::Message(message),
        Err(error) => {
            tracing::warn!(side, %error, "a device link frame that is no MCP message was dropped");
            Read::Dropped
        }
    }
}

/// JSON-RPC's "method not found" for the request `id`.
fn refusal(id: &serde_json::Value, method: &str) -> String {
    let method = crate::util::bounded::clip(method, 64);
    let message =
        format!("`{method}` is not served over a device link: the hub asks, the device answers");
    let refusal = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": message}});
    refusal.to_string()
}

/// A message as a frame's text.
pub(super) fn text_of<R: ServiceRole>(message: &TxJsonRpcMessage<R>) -> String {
    // Messages are made of JSON values and strings: serializing them cannot fail.
    serde_json::to_string(message).unwrap_or_default()
}

/// How one WebSocket library's frames carry text.
pub(super) struct Frames<M> {
    /// A frame's text (`None` for pings and other control frames).
    pub(super) text: fn(M) -> Option<String>,
    /// A text frame.
    pub(super) frame: fn(String) -> M,
}

/// The (sink, stream) pair rmcp runs a service over, from a WebSocket's `frames`: `serves`
/// says which requests of the other end this end answers (any other is refused at once: a
/// device asking the hub to run a tool), and `heard` is told of every frame that arrives,
/// pings included.
pub(super) fn transport<R, Ws, M, E>(
    (side, socket): (&'static str, Ws),
    Frames { text, frame }: Frames<M>,
    serves: fn(&str) -> bool,
    heard: impl Fn() + Send + 'static,
) -> (
    impl Sink<TxJsonRpcMessage<R>, Error = SendError> + Send + Unpin + 'static,
    impl Stream<Item = RxJsonRpcMessage<R>> + Send + Unpin + 'static,
)
where
    R: ServiceRole,
    Ws: Stream<Item = Result<M, E>> + Sink<M, Error = E> + Send + 'static,
    M: Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let (socket_sink, socket_stream) = socket.split();
    // One queue of outgoing frames, fed by the service and by refusals alike.
    let (outgoing, queued) = mpsc::channel::<String>(64);
    tokio::spawn(queued.map(move |text| Ok(frame(text))).forward(socket_sink));
    let sink = outgoing.clone().with(|message: TxJsonRpcMessage<R>| {
        futures::future::ready(Ok::<String, SendError>(text_of::<R>(&message)))
    });
    // The stream ends at the first error: a broken link is a closed one.
    let stream = socket_stream
        .take_while(|frame| futures::future::ready(frame.is_ok()))
        .filter_map(move |frame| {
            heard();
            let message = match frame
                .ok()
                .and_then(text)
                .map(|t| read::<R>(side, &t, serves))
            {
                Some(Read::Message(message)) => Some(message),
                Some(Read::Refused(refusal)) => {
                    // A full queue drops the refusal: the asker is flooding the link.
                    let _ = outgoing.clone().try_send(refusal);
                    None
                }
                Some(Read::Dropped) | None => None,
            };
            futures::future::ready(message)
        });
    (Box::pin(sink), Box::pin(stream))
}
