//! One device's link as the hub holds it: the MCP handshake over the WebSocket the device
//! opened, its tools registered, and, when the link ends, the device marked offline.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use rmcp::{RoleClient, ServiceExt};
use tokio_util::sync::CancellationToken;

use super::frames::{self, Frames};
use super::hub::{DeviceHub, Slot};
use super::routed::DeviceTool;
use crate::events::EventKind;
use crate::registry::Registry;
use crate::util::time::now_millis;

/// How long the device has to answer the handshake and list its tools.
const HANDSHAKE: Duration = Duration::from_secs(15);

/// A link from which nothing (not even a ping) came for this long is taken for dead: the
/// device link pings every [`PING_EVERY`](super::link::PING_EVERY).
const SILENCE: Duration = Duration::from_secs(60);

/// The hub's MCP client over a device's link.
type Service = rmcp::service::RunningService<RoleClient, ()>;

/// Serves one device's link until it closes (or is revoked, or replaced).
pub(super) async fn hold(hub: DeviceHub, registry: Registry, slot: Arc<Slot>, socket: WebSocket) {
    let device = slot.id().to_owned();
    let last_frame = Arc::new(AtomicU64::new(now_millis()));
    let Some((service, accepted)) = start(&hub, &slot, socket, &last_frame).await else {
        return;
    };
    let offered = offer(&registry, &slot, accepted);
    let ended = CancellationToken::new();
    let Some(number) = slot.open(service.peer().clone(), ended.clone(), offered.clone()) else {
        return; // revoked while connecting
    };
    registry.announce_change();
    let tools = offered.clone();
    publish(
        &registry,
        &device,
        EventKind::DeviceOnline {
            device: device.clone(),
            tools,
        },
    );
    tracing::info!(device, tools = offered.len(), "device online");

    until_closed(service, &ended, &last_frame, &device).await;
    ended.cancel();
    let reason = if slot.is_revoked() {
        "revoked"
    } else {
        "disconnected"
    };
    // A replaced link's end changes nothing: the new link holds the device.
    if slot.close(number) {
        registry.announce_change();
        let (device, reason, tools) = (device.clone(), reason.to_owned(), offered);
        publish(
            &registry,
            &device,
            EventKind::DeviceOffline {
                device: device.clone(),
                reason,
                tools,
            },
        );
        tracing::info!(device, "device offline");
    }
}

/// The MCP handshake over the link and the device's tools the hub accepts; `None` (said in
/// the log) if the device fails it or takes too long.
async fn start(
    hub: &DeviceHub,
    slot: &Arc<Slot>,
    socket: WebSocket,
    last_frame: &Arc<AtomicU64>,
) -> Option<(Service, Vec<DeviceTool>)> {
    let device = slot.id();
    let heard = {
        let (last_frame, slot) = (Arc::clone(last_frame), Arc::clone(slot));
        // Every frame, pings included, is word from the device.
        move || {
            last_frame.store(now_millis(), Ordering::Relaxed);
            slot.heard();
        }
    };
    let frames = Frames {
        text: text_of,
        frame: frame_of,
    };
    // A device may ping the hub; it asks nothing else of it.
    let serves = |method: &str| method == "ping";
    let transport =
        frames::transport::<RoleClient, _, _, _>(("hub", socket), frames, serves, heard);
    let started = tokio::time::timeout(HANDSHAKE, async {
        let service = ().serve(transport).await.map_err(|error| error.to_string())?;
        let tools = service.peer().list_all_tools().await;
        let tools = tools.map_err(|error| format!("tools/list failed: {error}"))?;
        Ok::<_, String>((service, tools))
    });
    let (service, announced) = match started.await {
        Ok(Ok(started)) => started,
        Ok(Err(error)) => {
            tracing::warn!(device, %error, "a device's link failed at the start");
            return None;
        }
        Err(_) => {
            tracing::warn!(
                device,
                "a device did not list its tools in time; link closed"
            );
            return None;
        }
    };
    let accepted: Vec<DeviceTool> = announced
        .iter()
        .filter_map(|tool| DeviceTool::accepted(slot, tool, hub.routed_call_timeout()))
        .collect();
    if accepted.len() < announced.len() {
        let accepts = |name: &&str| slot.rules.accept.iter().any(|accepted| accepted == name);
        let left_out: Vec<&str> = announced
            .iter()
            .map(|tool| &*tool.name)
            .filter(|name| !accepts(name))
            .collect();
        tracing::info!(
            device,
            ?left_out,
            "tools the hub does not accept were left out"
        );
    }
    Some((service, accepted))
}

/// Waits until the link closes, is ended (revoked, replaced) or falls silent; then closes it.
async fn until_closed(
    service: Service,
    ended: &CancellationToken,
    last_frame: &AtomicU64,
    device: &str,
) {
    let stop = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => {}
        () = ended.cancelled() => {}
        () = silence(last_frame) => {
            tracing::warn!(device, "no word from the device for {} s; link closed", SILENCE.as_secs());
        }
    }
    stop.cancel();
}

/// Registers the device's accepted tools in place of those it offered before; returns the
/// names registered (a tool whose name the registry refuses, e.g. taken by one of the
/// hub's own, is reported and left out).
fn offer(registry: &Registry, slot: &Slot, accepted: Vec<DeviceTool>) -> Vec<String> {
    for name in slot.status().tools {
        registry.unregister(&name);
    }
    let mut offered = Vec::with_capacity(accepted.len());
    for tool in accepted {
        let name = tool.name().to_owned();
        match registry.register(tool) {
            Ok(()) => offered.push(name),
            Err(error) => {
                tracing::warn!(device = slot.id(), tool = name, %error, "a device's tool was not registered")
            }
        }
    }
    offered
}

/// Ends once no frame came for [`SILENCE`].
async fn silence(last_frame: &AtomicU64) {
    loop {
        tokio::time::sleep(SILENCE / 4).await;
        let quiet = now_millis().saturating_sub(last_frame.load(Ordering::Relaxed));
        if quiet >= SILENCE.as_millis() as u64 {
            return;
        }
    }
}

fn publish(registry: &Registry, device: &str, kind: EventKind) {
    registry.publish(|| (format!("device:{device}"), None, kind));
}

fn text_of(message: Message) -> Option<String> {
    match message {
        Message::Text(text) => Some(text.to_string()),
        _ => None,
    }
}

fn frame_of(text: String) -> Message {
    Message::Text(text.into())
}
