//! The hub's routes: `GET /devices/connect` (a device opens its link), `GET /devices` (the
//! devices a caller may use, online or not) and `POST /devices/{id}/revoke`.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::frames::MAX_FRAME;
use super::hub::{DeviceHub, DeviceStatus};
use crate::adapters::http::ApiError;
use crate::adapters::http::extract::not_let_in;
use crate::adapters::http::unread::after_reading;
use crate::adapters::http::{AuthError, Authenticate};
use crate::caller::Caller;
use crate::registry::Registry;

/// Why a hub's routes could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceHubError {
    /// Each device setting that is wrong, naming the device and the fix.
    pub problems: Vec<String>,
}

impl std::fmt::Display for DeviceHubError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the device hub cannot start: {}",
            self.problems.join("; ")
        )
    }
}

impl std::error::Error for DeviceHubError {}

struct Served {
    hub: DeviceHub,
    registry: Registry,
    auth: Box<dyn Authenticate>,
}

impl DeviceHub {
    /// The hub's routes, for the registry built with [`attach`](Self::attach): devices
    /// connect at `GET /devices/connect` with their own tokens (which open nothing else);
    /// callers, authenticated by `auth`, see the devices whose tools their role may use at
    /// `GET /devices`, and callers of the highest role revoke one with
    /// `POST /devices/{id}/revoke`. Fails if a device's settings are wrong.
    pub fn router(
        &self,
        registry: Registry,
        auth: impl Authenticate,
    ) -> Result<Router, DeviceHubError> {
        let problems = self.problems(&registry);
        if !problems.is_empty() {
            return Err(DeviceHubError { problems });
        }
        let served = Arc::new(Served {
            hub: self.clone(),
            registry,
            auth: Box::new(auth),
        });
        Ok(Router::new()
            .route("/devices/connect", get(connect))
            .route("/devices", get(list))
            .route("/devices/{id}/revoke", post(revoke))
            .with_state(served))
    }
}

/// A device opens its link: its token names it; anything else is refused before the
/// WebSocket is accepted.
async fn connect(
    State(served): State<Arc<Served>>,
    parts: Parts,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let Some(token) = bearer(&parts) else {
        return not_let_in(AuthError::no_credentials(
            "a device connects with its token: `Authorization: Bearer <token>`",
        ));
    };
    let slot = served.hub.device_of(token);
    let Some(slot) = slot.filter(|slot| !slot.is_revoked()) else {
        tracing::warn!("a device link with a token the hub does not accept was refused");
        return not_let_in(AuthError::unauthenticated(
            "this device token is not accepted (unknown, or revoked)",
        ));
    };
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => {
            let message = format!("a device link is a WebSocket: {rejection}");
            return ApiError::new(StatusCode::UPGRADE_REQUIRED, "websocket_required", message)
                .into_response();
        }
    };
    let (hub, registry) = (served.hub.clone(), served.registry.clone());
    upgrade
        .max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| super::link_at_hub::hold(hub, registry, slot, socket))
}

/// The devices whose tools the caller's role may use.
async fn list(State(served): State<Arc<Served>>, parts: Parts) -> Response {
    let caller = match served.auth.authenticate(&parts).await {
        Ok(caller) => caller,
        Err(error) => return not_let_in(error),
    };
    let seen: Vec<DeviceStatus> = served
        .hub
        .devices()
        .into_iter()
        .filter(|device| may_use(&served.registry, &caller, &device.permission))
        .collect();
    Json(seen).into_response()
}

/// Revokes a device's token, for callers of the highest role; a device the caller may not
/// use is answered as an unknown one.
async fn revoke(
    State(served): State<Arc<Served>>,
    Path(id): Path<String>,
    request: axum::extract::Request,
) -> Response {
    // The route takes no body; one sent anyway is read before the answer (see `unread`).
    let (parts, body) = request.into_parts();
    let answer = revoke_as_caller(&served, &id, &parts).await;
    after_reading(body, answer).await
}

async fn revoke_as_caller(served: &Served, id: &str, parts: &Parts) -> Response {
    let caller = match served.auth.authenticate(parts).await {
        Ok(caller) => caller,
        Err(error) => return not_let_in(error),
    };
    let device = served
        .hub
        .devices()
        .into_iter()
        .find(|device| device.id == id);
    let Some(device) = device.filter(|d| may_use(&served.registry, &caller, &d.permission)) else {
        let message = format!(
            "there is no device `{}`",
            crate::util::bounded::clip(id, 64)
        );
        return ApiError::new(StatusCode::NOT_FOUND, "unknown_device", message).into_response();
    };
    let roles = served.registry.roles();
    let highest = roles.names().last().map(String::as_str);
    if highest != Some(caller.role()) {
        let message = format!(
            "only the role `{}` may revoke devices",
            highest.unwrap_or("")
        );
        return ApiError::new(StatusCode::FORBIDDEN, "forbidden", message).into_response();
    }
    served.hub.revoke(&device.id);
    tracing::warn!(device = device.id, by = caller.id(), "device revoked");
    Json(serde_json::json!({"revoked": device.id})).into_response()
}

fn may_use(registry: &Registry, caller: &Caller, permission: &str) -> bool {
    let roles = registry.roles();
    match (roles.rank(caller.role()), roles.rank(permission)) {
        (Some(caller), Some(needed)) => caller >= needed,
        _ => false,
    }
}

fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}
