//! What machine the application runs on: system, disks, network, processes (via `sysinfo`).

use serde::Deserialize;
use serde_json::{Value, json};
use sysinfo::{Disks, Networks, System};
use toolgate::prelude::*;

/// Most processes listed.
const TOP_PROCESSES: usize = 10;

/// A part of the device information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    /// Host name, operating system, CPU, memory, uptime.
    System,
    /// Mounted disks with their space.
    Disk,
    /// Network interfaces with bytes sent and received.
    Network,
    /// The processes using the most memory.
    Processes,
}

/// Information about this device: host name, operating system, CPU and memory, and on
/// request disks, network interfaces and the busiest processes.
#[tool(manual, group = "system", read_only)]
pub fn get_device_info(
    /// Which parts to include; the system part if omitted.
    #[serde(default)]
    include: Vec<Section>,
) -> Value {
    let include = if include.is_empty() {
        vec![Section::System]
    } else {
        include
    };
    let mut info = serde_json::Map::new();
    let mut system = System::new();
    if include.contains(&Section::System) || include.contains(&Section::Processes) {
        system.refresh_memory();
        system.refresh_cpu_all();
    }
    if include.contains(&Section::System) {
        info.insert(
            "system".into(),
            json!({
                "hostname": System::host_name(),
                "os": System::long_os_version(),
                "kernel": System::kernel_version(),
                "architecture": System::cpu_arch(),
                "cpus": system.cpus().len(),
                "cpu_brand": system.cpus().first().map(|cpu| cpu.brand().to_owned()),
                "memory_total_bytes": system.total_memory(),
                "memory_used_bytes": system.used_memory(),
                "uptime_seconds": System::uptime(),
            }),
        );
    }
    if include.contains(&Section::Disk) {
        let disks = Disks::new_with_refreshed_list();
        let disks: Vec<Value> = disks
            .list()
            .iter()
            .map(|disk| {
                json!({
                    "mount_point": disk.mount_point().to_string_lossy(),
                    "file_system": disk.file_system().to_string_lossy(),
                    "total_bytes": disk.total_space(),
                    "available_bytes": disk.available_space(),
                })
            })
            .collect();
        info.insert("disks".into(), Value::Array(disks));
    }
    if include.contains(&Section::Network) {
        let networks = Networks::new_with_refreshed_list();
        let networks: Vec<Value> = networks
            .iter()
            .map(|(name, data)| json!({"interface": name, "received_bytes": data.total_received(), "sent_bytes": data.total_transmitted()}))
            .collect();
        info.insert("network".into(), Value::Array(networks));
    }
    if include.contains(&Section::Processes) {
        system.refresh_processes(sysinfo::ProcessesToUpdate::All, true);
        let mut processes: Vec<_> = system.processes().values().collect();
        processes.sort_by_key(|process| std::cmp::Reverse(process.memory()));
        let top: Vec<Value> = processes
            .into_iter()
            .take(TOP_PROCESSES)
            .map(|process| json!({"pid": process.pid().as_u32(), "name": process.name().to_string_lossy(), "memory_bytes": process.memory()}))
            .collect();
        info.insert("processes".into(), Value::Array(top));
    }
    Value::Object(info)
}
