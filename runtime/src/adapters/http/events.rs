//! `GET /events`: a caller's own events as server-sent events, and, for an approver, the
//! approval requests it may decide and how they were decided.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::Stream;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::adapters::http::Shared;
use crate::adapters::http::extract::Authenticated;
use crate::caller::Caller;
use crate::events::{Event, EventKind};
use crate::registry::Registry;

/// `GET /events`
pub(crate) async fn events(
    State(shared): State<Arc<Shared>>,
    Authenticated(caller): Authenticated,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let receiver = shared.registry.events();
    let registry = shared.registry.clone();
    let stream = futures::stream::unfold(receiver, move |mut receiver| {
        let (registry, caller) = (registry.clone(), caller.clone());
        async move {
            loop {
                match receiver.recv().await {
                    Ok(event) if concerns(&registry, &caller, &event) => {
                        return Some((Ok(as_sse(&event)), receiver));
                    }
                    Ok(_) => continue,
                    Err(RecvError::Lagged(missed)) => {
                        let notice = SseEvent::default()
                            .event("lagged")
                            .data(json!({"type": "lagged", "missed": missed}).to_string());
                        return Some((Ok(notice), receiver));
                    }
                    Err(RecvError::Closed) => return None,
                }
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// The caller's own events, the approval requests it may decide and their decisions (so
/// every approver's list stays current, whoever decides), and devices coming and going
/// whose tools it may use.
fn concerns(registry: &Registry, caller: &Caller, event: &Event) -> bool {
    if let EventKind::DeviceOnline { tools, .. } | EventKind::DeviceOffline { tools, .. } =
        &event.kind
    {
        return tools
            .iter()
            .any(|tool| registry.definition(caller, tool).is_some());
    }
    if event.caller == caller.id() {
        return true;
    }
    match &event.kind {
        EventKind::ApprovalRequested { tool, .. } | EventKind::ApprovalDecided { tool, .. } => {
            registry.may_decide(caller, tool)
        }
        _ => false,
    }
}

fn as_sse(event: &Event) -> SseEvent {
    let value = serde_json::to_value(event).unwrap_or_default();
    let name = value.get("type").and_then(Value::as_str).unwrap_or("event");
    SseEvent::default().event(name).data(value.to_string())
}
