//! The hub: the devices it accepts, which of them are online, and the tools each offers.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::Peer;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::device::Device;
use crate::adapters::mcp::client::local_name;
use crate::registry::Registry;
use crate::registry::RegistryBuilder;
use crate::util::time::now_millis as now_ms;

/// The devices a backend accepts, routing its registry's calls to them over the links they
/// open ([`router`](Self::router)). Cheap to clone: clones share the devices' state.
///
/// ```
/// use toolgate::devices::{Device, DeviceHub};
///
/// let hub = DeviceHub::new([Device::new("laptop-123")
///     .token("a long random token")
///     .permission("staff")
///     .accept(["make_folder"])]);
/// let registry = hub
///     .attach(toolgate::Registry::builder().roles(["public", "staff"]))
///     .build()
///     .unwrap();
/// let auth = |_: &axum::http::request::Parts| Ok(toolgate::Caller::new("ada", "staff"));
/// let routes = hub.router(registry, auth).unwrap(); // nest beside the HTTP or MCP routes
/// # let _ = routes;
/// ```
#[derive(Clone)]
pub struct DeviceHub {
    pub(super) inner: Arc<HubInner>,
}

pub(super) struct HubInner {
    pub(super) slots: BTreeMap<String, Arc<Slot>>,
    /// A routed call's time limit, in milliseconds.
    call_timeout_ms: AtomicU64,
}

/// One accepted device and what is known of it now.
pub(super) struct Slot {
    pub(super) rules: Device,
    /// The hub's names of the tools in `rules.approve`, in its order (made once, not per
    /// call).
    pub(super) approved: Vec<String>,
    state: Mutex<SlotState>,
}

#[derive(Default)]
struct SlotState {
    link: Option<Link>,
    last_seen_ms: Option<u64>,
    /// The hub's names of the tools it offers (kept while it is offline).
    tools: Vec<String>,
    revoked: bool,
    /// Counts the links, so that the end of a replaced one changes nothing.
    links: u64,
}

/// An open link: the device's MCP peer, and its end (cancelled when the link closes, or to
/// close it).
#[derive(Clone)]
pub(super) struct Link {
    pub(super) peer: Peer<RoleClient>,
    pub(super) ended: CancellationToken,
    pub(super) number: u64,
}

/// What is known of one device now ([`DeviceHub::devices`], `GET /devices`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DeviceStatus {
    /// Its id.
    pub id: String,
    /// Whether its link is open.
    pub online: bool,
    /// When it was last heard from (any message or ping over its link, or its leaving),
    /// milliseconds since the Unix epoch; `None` if never since the hub started.
    pub last_seen_ms: Option<u64>,
    /// The hub's names of the tools it offers.
    pub tools: Vec<String>,
    /// The role its tools need.
    pub permission: String,
    /// Whether its token was revoked ([`DeviceHub::revoke`]).
    pub revoked: bool,
}

impl DeviceHub {
    /// A hub accepting these devices. Their settings are checked by
    /// [`router`](Self::router), against the registry's roles.
    pub fn new(devices: impl IntoIterator<Item = Device>) -> Self {
        let slots = devices
            .into_iter()
            .map(|rules| {
                let prefix = format!("{}{SEPARATOR}", rules.id);
                let approved = rules
                    .approve
                    .iter()
                    .map(|tool| local_name(&prefix, tool))
                    .collect();
                let slot = Slot {
                    rules,
                    approved,
                    state: Mutex::default(),
                };
                (slot.rules.id.clone(), Arc::new(slot))
            })
            .collect();
        DeviceHub {
            inner: Arc::new(HubInner {
                slots,
                call_timeout_ms: AtomicU64::new(60_000),
            }),
        }
    }

    /// How long a routed call may take before it ends with a `timeout` error (default 60 s;
    /// the tool's own time limit at the hub applies as well). Applies to the devices that
    /// connect from then on, for every clone of the hub.
    pub fn call_timeout(self, timeout: Duration) -> Self {
        let millis = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.inner.call_timeout_ms.store(millis, Ordering::Relaxed);
        self
    }

    /// A routed call's time limit.
    pub(super) fn routed_call_timeout(&self) -> Duration {
        Duration::from_millis(self.inner.call_timeout_ms.load(Ordering::Relaxed))
    }

    /// Adds the hub's stages to a registry being built: the tools of an offline device
    /// leave the lists (a call to one answers `device_offline` at once), a call whose
    /// arguments take values the device does not allow is refused, and one of a tool the
    /// device's settings name for approval waits for a person.
    pub fn attach(&self, builder: RegistryBuilder) -> RegistryBuilder {
        builder
            .listing_stage(super::stages::OfflineDevices(self.clone()))
            .call_stage(super::stages::DeviceRules(self.clone()))
    }

    /// Every device, with what is known of it now.
    pub fn devices(&self) -> Vec<DeviceStatus> {
        self.inner
            .slots
            .values()
            .map(|slot| slot.status())
            .collect()
    }

    /// Revokes a device's token: its link is closed now, and it is refused at every
    /// connect until the hub starts again (to revoke it for good, remove or change its
    /// token in the hub's configuration). Returns whether the device exists.
    pub fn revoke(&self, id: &str) -> bool {
        let Some(slot) = self.inner.slots.get(id) else {
            return false;
        };
        // The link's own end marks the device offline (and says it was revoked).
        let link = {
            let mut state = slot.lock();
            state.revoked = true;
            state.link.clone()
        };
        if let Some(link) = link {
            tracing::warn!(device = id, "device token revoked; closing its link");
            link.ended.cancel();
        }
        true
    }

    /// The device a presented token belongs to. Every device's digest is compared, in
    /// constant time, whatever matches.
    pub(super) fn device_of(&self, token: &str) -> Option<Arc<Slot>> {
        use sha2::{Digest, Sha256};
        use subtle::ConstantTimeEq;
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for slot in self.inner.slots.values() {
            let matches = slot
                .rules
                .token
                .is_some_and(|digest| bool::from(digest.ct_eq(&presented)));
            if matches {
                found = Some(Arc::clone(slot));
            }
        }
        found
    }

    pub(super) fn slot_of_group(&self, group: Option<&str>) -> Option<&Arc<Slot>> {
        let id = group?.strip_prefix(GROUP_PREFIX)?;
        self.inner.slots.get(id)
    }

    /// Every device's settings checked against the registry's roles.
    pub(super) fn problems(&self, registry: &Registry) -> Vec<String> {
        let roles = registry.roles();
        self.inner
            .slots
            .values()
            .filter_map(|slot| {
                let problem = slot.rules.problem(Some(roles))?;
                Some(format!("device `{}`: {problem}", slot.rules.id))
            })
            .collect()
    }
}

/// The group of a device's tools is this and its id.
pub(super) const GROUP_PREFIX: &str = "device:";

/// Between a device's id and a tool's name at the hub.
pub(super) const SEPARATOR: &str = "__";

impl Slot {
    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn id(&self) -> &str {
        &self.rules.id
    }

    pub(super) fn status(&self) -> DeviceStatus {
        let state = self.lock();
        DeviceStatus {
            id: self.rules.id.clone(),
            online: state.link.is_some(),
            last_seen_ms: state.last_seen_ms,
            tools: state.tools.clone(),
            permission: self.rules.permission.clone(),
            revoked: state.revoked,
        }
    }

    pub(super) fn is_revoked(&self) -> bool {
        self.lock().revoked
    }

    /// The open link, if the device is online.
    pub(super) fn link(&self) -> Option<Link> {
        self.lock().link.clone()
    }

    pub(super) fn is_online(&self) -> bool {
        self.lock().link.is_some()
    }

    /// Takes a new link (replacing an older one, which a device that reconnects left
    /// behind) offering `tools`; returns its number. Refused if revoked meanwhile.
    pub(super) fn open(
        &self,
        peer: Peer<RoleClient>,
        ended: CancellationToken,
        tools: Vec<String>,
    ) -> Option<u64> {
        let mut state = self.lock();
        if state.revoked {
            return None;
        }
        state.links += 1;
        let number = state.links;
        let new = Link {
            peer,
            ended,
            number,
        };
        if let Some(old) = state.link.replace(new) {
            old.ended.cancel();
        }
        state.last_seen_ms = Some(now_ms());
        state.tools = tools;
        Some(number)
    }

    /// Marks the link `number` closed; whether it was the open one (a replaced link's end
    /// changes nothing).
    pub(super) fn close(&self, number: u64) -> bool {
        let mut state = self.lock();
        let current = state
            .link
            .as_ref()
            .is_some_and(|link| link.number == number);
        if current {
            state.link = None;
            state.last_seen_ms = Some(now_ms());
        }
        current
    }

    /// Notes that the device was heard from.
    pub(super) fn heard(&self) {
        self.lock().last_seen_ms = Some(now_ms());
    }
}
