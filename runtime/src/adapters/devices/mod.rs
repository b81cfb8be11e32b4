//! Tools that run on people's own devices (a laptop, a home server behind a router), routed
//! by the backend (feature `devices`).
//!
//! A device sits behind NAT and a changing address, so it connects **out**: a
//! [`DeviceLink`] (or `toolgate device --hub <url>`) keeps one WebSocket open to the hub,
//! and over it the hub speaks MCP to the device's own registry as its client. The device
//! opened the link; the hub asks the questions. The link is opened again, with backoff,
//! whenever it drops.
//!
//! The hub ([`DeviceHub`]) says which devices it accepts, each with its own token (only its
//! SHA-256 digest is kept, and it opens the device's link and nothing else), and for each
//! [`Device`]: which of its tools are offered, the role they need, which need a person's
//! approval at the hub, and which values their arguments may take (paths, apps).
//!
//! **Routing.** Each accepted tool of a device is a tool of the hub's registry named
//! `<device>__<tool>` (`laptop-123__make_folder`), in the group `device:<device>` and tagged
//! so. It is an ordinary tool there: roles decide who sees it, the policy and Cedar rules
//! (`resource.group == "device:laptop-123"`) decide its calls, approvals, budgets, the audit
//! record (whose `tool` names the device) and events all apply. A caller never sees the
//! devices its role may not use. Every call is checked again on the device, by its own
//! registry (its roles, sandbox and policy) as the caller the link serves.
//!
//! **What a device cannot do.** It offers only the tools the hub accepts: anything else it
//! announces is left out. The hub's settings decide a tool's name, permission and approval;
//! what the device says of its tools (read-only, harmless) never lowers them. A device
//! cannot see or call the hub's tools or another device's: it is the server on its link, and
//! its token opens nothing else.
//!
//! **Lifecycle.** A device is online while its link is open ([`DeviceHub::devices`],
//! `GET /devices`, and the registry's events `device_online` and `device_offline`). Its tools
//! join the lists when it connects and leave them when it goes (MCP clients are sent
//! `notifications/tools/list_changed`); a call to an offline device fails at once with
//! `device_offline`, and a call in flight when its link drops ends with
//! `device_disconnected`, audited like every call. A device's tools are learnt from the
//! device: until it first connects, the hub offers none of them.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate::devices::{Device, DeviceHub};
//! use toolgate::{Caller, Registry};
//!
//! // The hub.
//! let hub = DeviceHub::new([Device::new("laptop-123")
//!     .token_sha256("5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8")
//!     .permission("staff")
//!     .accept(["make_folder", "delete_folder"])
//!     .approve(["delete_folder"])
//!     .allow_values("path", ["/home/ada/**"])]);
//! let registry = hub.attach(Registry::builder().roles(["public", "staff"])).build()?;
//! let auth = |_: &axum::http::request::Parts| Ok(Caller::new("ada", "staff"));
//! let app = hub.router(registry.clone(), auth)?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

mod device;
mod frames;
mod hub;
mod link;
mod link_at_hub;
mod routed;
mod routes;
mod stages;

pub use device::Device;
pub use hub::{DeviceHub, DeviceStatus};
pub use link::{DeviceLink, DeviceLinkError};
pub use routes::DeviceHubError;
