//! `[devices.ID]`: the devices this hub accepts, made into a `DeviceHub` whose settings are
//! checked here, each problem at its device's line.

use std::ops::Range;

use toolgate::devices::{Device, DeviceHub};

use super::Config;
use super::keys::DeviceKey;
use toolgate_tools::Problem;

impl Config {
    /// The hub of the configured devices, or `None` when there are none.
    pub(super) fn device_hub(&self) -> Result<Option<DeviceHub>, Problem> {
        if self.file.devices.is_empty() {
            return Ok(None);
        }
        let mut devices = Vec::new();
        for (id, key) in &self.file.devices {
            let at = |span: std::ops::Range<usize>, message: String| {
                self.problem_at(span, format!("[devices.{id}]: {message}"))
            };
            let device = self
                .device(id, key.get_ref())
                .map_err(|(span, message)| at(span.unwrap_or_else(|| key.span()), message))?;
            devices.push(device);
        }
        Ok(Some(DeviceHub::new(devices)))
    }

    /// The device `id` of `key`, or what is wrong and where (the key's value, else the
    /// device's table).
    fn device(&self, id: &str, key: &DeviceKey) -> Result<Device, (Option<Range<usize>>, String)> {
        let mut device = Device::new(id);
        device = match (&key.token_env, &key.token_sha256) {
            (Some(variable), None) => {
                let name = variable.get_ref();
                let token = std::env::var(name).ok().filter(|token| !token.is_empty());
                let token = token.ok_or_else(|| {
                    let message = format!("the environment variable `{name}` (the device's token) is not set");
                    (Some(variable.span()), message)
                })?;
                device.token(token)
            }
            (None, Some(digest)) => {
                let device = device.token_sha256(digest.get_ref());
                device.check().map_err(|message| (Some(digest.span()), message))?;
                device
            }
            _ => return Err((None, "give the device's token as `token_env = \"VARIABLE\"` or `token_sha256 = \"<hex>\"` (one of the two)".into())),
        };
        let accepted = key.tools.get_ref();
        if accepted.is_empty() {
            let message = "`tools` names at least one of the device's tools".to_owned();
            return Err((Some(key.tools.span()), message));
        }
        device = device
            .permission(key.permission.get_ref())
            .accept(accepted.iter().cloned())
            .approve(key.approve.iter().cloned())
            .read_only(key.read_only.iter().cloned());
        let roles = self.file.roles.get_ref();
        let rank = |role: &str| roles.iter().position(|name| name == role);
        for (tool, role) in &key.permissions {
            if rank(role.get_ref()) < rank(key.permission.get_ref()) {
                let message = format!(
                    "`{tool}` needs \"{}\", below the device's \"{}\": a tool's own permission can only raise it",
                    role.get_ref(),
                    key.permission.get_ref()
                );
                return Err((Some(role.span()), message));
            }
            device = device.tool_permission(tool, role.get_ref());
        }
        for (argument, patterns) in &key.allow {
            device = device.allow_values(argument, patterns.iter().cloned());
        }
        device
            .check()
            .map(|()| device)
            .map_err(|message| (None, message))
    }
}
