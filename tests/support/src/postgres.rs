//! A throwaway PostgreSQL server: Debian's binaries (`apt-get install postgresql`; `.ci/run`
//! installs them), a cluster in a temporary folder, listening on 127.0.0.1 only, stopped
//! and deleted when dropped. Run as root (as CI does), the server runs as an unprivileged
//! user, since PostgreSQL refuses to run as root.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

use tempfile::TempDir;

/// The role the tests connect as (trusted on loopback: no password).
const USER: &str = "toolgate";

/// A running PostgreSQL server of its own.
pub struct TempPostgres {
    folder: TempDir,
    bin: PathBuf,
    port: u16,
    run_as: Option<String>,
}

impl TempPostgres {
    /// Initializes and starts a server; panics with what to install if PostgreSQL is
    /// missing.
    pub fn start() -> TempPostgres {
        let bin = binaries().unwrap_or_else(|| {
            panic!(
                "PostgreSQL's server binaries were not found (looked in /usr/lib/postgresql/*/bin \
                 and PATH): install them with `apt-get install postgresql` (.ci/run does)"
            )
        });
        let folder = tempfile::Builder::new()
            .prefix("toolgate-pg-")
            .tempdir()
            .expect("a temporary folder");
        let run_as = running_as_root().then(unprivileged_user);
        if let Some(user) = &run_as {
            give_to(folder.path(), user);
        }
        let server = TempPostgres {
            port: free_port(),
            folder,
            bin,
            run_as,
        };
        server.init();
        server.start_server();
        server
    }

    /// The address of a new, empty database on this server.
    pub fn new_database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!("db{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let created = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                USER,
                &name,
            ])
            .output()
            .expect("createdb runs");
        check("createdb", &created);
        self.url(&name)
    }

    /// The address of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{name}", self.port)
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Runs `pgbench` on `database` (an address from [`new_database`](Self::new_database))
    /// with `script` for `seconds`, `clients` at once: the transactions per second it
    /// reports.
    pub fn pgbench(&self, database: &str, script: &str, clients: u32, seconds: u32) -> f64 {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = database.rsplit('/').next().unwrap_or(database);
        let file = self.folder.path().join(format!(
            "bench-{}.sql",
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&file, script).expect("the pgbench script is written");
        let output = self
            .command("pgbench")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .args([
                "-n",
                "-M",
                "prepared",
                "-c",
                &clients.to_string(),
                "-j",
                "2",
            ])
            .args(["-T", &seconds.to_string(), "-f"])
            .arg(&file)
            .arg(name)
            .output()
            .expect("pgbench runs");
        check("pgbench", &output);
        let report = String::from_utf8_lossy(&output.stdout);
        report
            .lines()
            .find_map(|line| line.strip_prefix("tps = "))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("pgbench reported no tps:\n{report}"))
    }

    fn data(&self) -> PathBuf {
        self.folder.path().join("data")
    }

    fn init(&self) {
        let data = self.data();
        let output = self
            .command("initdb")
            .args(["-D", &data.to_string_lossy(), "-U", USER])
            .args(["--auth=trust", "--encoding=UTF8", "--no-sync"])
            .output()
            .expect("initdb runs");
        check("initdb", &output);
    }

    fn start_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.folder.path().display()
        );
        let log = self.folder.path().join("server.log");
        let output = self
            .command("pg_ctl")
            .args(["-D", &self.data().to_string_lossy()])
            .args([
                "-l",
                &log.to_string_lossy(),
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ])
            .output()
            .expect("pg_ctl runs");
        if !output.status.success() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            panic!(
                "PostgreSQL did not start: {}\n{log}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    /// One of the server's programs, run as the server's user.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.run_as {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(path);
                command
            }
            None => Command::new(path),
        }
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                &self.data().to_string_lossy(),
                "-m",
                "immediate",
                "stop",
            ])
            .output();
    }
}

/// The newest installed server's binaries.
fn binaries() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    // Elsewhere, `pg_config` knows where they are.
    let output = Command::new("pg_config").arg("--bindir").output().ok()?;
    let bin = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    bin.join("initdb").exists().then_some(bin)
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// `postgres` (made by Debian's package), else `nobody`.
fn unprivileged_user() -> String {
    let exists = |user: &str| {
        Command::new("id")
            .arg(user)
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if exists("postgres") {
        "postgres"
    } else {
        "nobody"
    }
    .to_owned()
}

fn give_to(folder: &Path, user: &str) {
    let output = Command::new("chown")
        .args(["-R", user])
        .arg(folder)
        .output()
        .expect("chown runs");
    check("chown", &output);
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

fn check(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
