//! Starting a program confined to the sandbox, where the kernel allows it (Landlock, Linux
//! 5.13 and later): it may read the system's folders, read and write only inside the
//! sandbox, execute only itself, its declared helper folders and the dynamic loader, and (on
//! kernels that can say so) open no TCP connection. Where Landlock is not available the
//! program starts unconfined, and the result says so.
//!
//! Landlock restricts the thread that asks and what it starts, so each program is started
//! from a fresh thread of its own, which restricts itself, starts the child and ends: no
//! thread of the application is ever restricted.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// Whether the program was confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Landlock enforced every rule asked for.
    Landlock,
    /// Landlock enforced some rules (an older kernel): files are confined, perhaps not all
    /// of the network.
    LandlockPartial,
    /// No confinement: the kernel has no Landlock (the argument policy still applies).
    None,
}

impl Confinement {
    /// `"landlock"`, `"landlock-partial"` or `"none"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Confinement::Landlock => "landlock",
            Confinement::LandlockPartial => "landlock-partial",
            Confinement::None => "none",
        }
    }
}

/// What a confined program may reach.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    /// Read and write (the sandbox roots).
    pub(crate) writable: Vec<PathBuf>,
    /// Execute (the program itself, its helper folders).
    pub(crate) executable: Vec<PathBuf>,
}

/// Folders every program reads: its libraries, the system's configuration, devices.
const READABLE: &[&str] = &[
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/dev",
];
/// Dynamic loaders, which the kernel opens as executables when a program starts.
const LOADERS: &[&str] = &[
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/ld-linux-aarch64.so.1",
    "/lib/ld-linux-armhf.so.3",
    "/lib/ld-musl-x86_64.so.1",
    "/lib/ld-musl-aarch64.so.1",
];

/// Starts `command` confined to `reach`, from a thread of its own.
pub(crate) async fn spawn(mut command: Command, reach: Reach) -> io::Result<(Child, Confinement)> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("toolgate-confined-start".into())
        .spawn(move || {
            let confinement = restrict_this_thread(&reach);
            let _ = sender.send(command.spawn().map(|child| (child, confinement)));
        })?;
    receiver.await.unwrap_or_else(|_| {
        Err(io::Error::other(
            "the starting thread ended without an answer",
        ))
    })
}

#[cfg(target_os = "linux")]
fn restrict_this_thread(reach: &Reach) -> Confinement {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        path_beneath_rules,
    };
    let abi = ABI::V5;
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let write = AccessFs::from_all(abi) & !AccessFs::Execute;
    let execute = AccessFs::Execute | AccessFs::ReadFile | AccessFs::ReadDir;
    let loaders: Vec<&Path> = LOADERS
        .iter()
        .map(Path::new)
        .filter(|path| path.exists())
        .collect();
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|ruleset| ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
        .and_then(|ruleset| ruleset.create())
        .and_then(|ruleset| ruleset.add_rules(path_beneath_rules(existing(READABLE), read)))
        .and_then(|ruleset| {
            ruleset.add_rules(path_beneath_rules(
                ["/dev/null"],
                AccessFs::WriteFile | AccessFs::ReadFile,
            ))
        })
        .and_then(|ruleset| ruleset.add_rules(path_beneath_rules(&reach.writable, write)))
        .and_then(|ruleset| ruleset.add_rules(path_beneath_rules(&reach.executable, execute)))
        .and_then(|ruleset| {
            ruleset.add_rules(path_beneath_rules(
                loaders,
                AccessFs::Execute | AccessFs::ReadFile,
            ))
        })
        .and_then(|ruleset| ruleset.restrict_self());
    match status {
        Ok(status) => match status.ruleset {
            RulesetStatus::FullyEnforced => Confinement::Landlock,
            RulesetStatus::PartiallyEnforced => Confinement::LandlockPartial,
            _ => Confinement::None,
        },
        Err(error) => {
            tracing::warn!(%error, "the program could not be confined with Landlock");
            Confinement::None
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn restrict_this_thread(_: &Reach) -> Confinement {
    Confinement::None
}

fn existing(paths: &[&'static str]) -> Vec<&'static str> {
    paths
        .iter()
        .copied()
        .filter(|path| Path::new(path).exists())
        .collect()
}
