//! A clinic process (the `clinic` binary) for tests of several instances on one database.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// One clinic process, killed when dropped.
pub struct Clinic {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Clinic {
    /// Starts a clinic on a free port with its state in `database`, its pets in `folder`'s
    /// `clinic.db`, and `calls_per_minute` per caller (0: no limit).
    #[allow(dead_code)] // not every test's
    pub fn start(folder: &Path, database: &str, calls_per_minute: u32) -> Clinic {
        Clinic::start_with(folder, database, calls_per_minute, &[])
    }

    /// [`start`](Self::start) with more environment variables (a model's address, say).
    pub fn start_with(
        folder: &Path,
        database: &str,
        calls_per_minute: u32,
        environment: &[(&str, &str)],
    ) -> Clinic {
        let mut child = Command::new(env!("CARGO_BIN_EXE_clinic"))
            .args(["--port", "0", "--database", database])
            .args(["--calls-per-minute", &calls_per_minute.to_string()])
            .arg("--clinic-db")
            .arg(folder.join("clinic.db"))
            .env("CLINIC_APPROVAL_KEY", "the key every instance shares")
            .env("RUST_LOG", "warn")
            .envs(environment.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the clinic starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let base = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|line| line.strip_prefix("clinic backend on ").map(str::to_owned))
            .expect("the clinic says where it listens");
        // Keep reading, so the clinic never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Clinic { child, base }
    }

    /// `SIGKILL`: no clean shutdown.
    #[allow(dead_code)] // one test's
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Clinic {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
