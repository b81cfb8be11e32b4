//! `[devices.ID]`: the devices this hub accepts, made into a `DeviceHub` whose settings are
//! checked here, each problem at its device's line.

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
            let device = self.device(id, key.get_ref()).map_err(|message| {
                self.problem_at(key.span(), format!("[devices.{id}]: {message}"))
            })?;
            devices.push(device);
        }
        Ok(Some(DeviceHub::new(devices)))
    }

    fn device(&self, id: &str, key: &DeviceKey) -> Result<Device, String> {
        let mut device = Device::new(id);
        device = match (&key.token_env, &key.token_sha256) {
            (Some(variable), None) => {
                let variable = variable.get_ref();
                let token = std::env::var(variable)
                    .ok()
                    .filter(|token| !token.is_empty())
                    .ok_or_else(|| format!("the environment variable `{variable}` (the device's token) is not set"))?;
                device.token(token)
            }
            (None, Some(digest)) => device.token_sha256(digest.get_ref()),
            _ => return Err("give the device's token as `token_env = \"VARIABLE\"` or `token_sha256 = \"<hex>\"` (one of the two)".into()),
        };
        let accepted = key.tools.get_ref();
        if accepted.is_empty() {
            return Err("`tools` names at least one of the device's tools".into());
        }
        device = device
            .permission(key.permission.get_ref())
            .accept(accepted.iter().cloned())
            .approve(key.approve.iter().cloned())
            .read_only(key.read_only.iter().cloned());
        for (argument, patterns) in &key.allow {
            device = device.allow_values(argument, patterns.iter().cloned());
        }
        device.check().map(|()| device)
    }
}
