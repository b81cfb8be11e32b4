//! A temporary project (config, tool folder, sandbox) and the binary run in it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A project folder: `toolgate.toml`, `.toolgate/tools/`, and the sandbox `work/`.
pub struct Project {
    folder: tempfile::TempDir,
    /// The user's config home (empty), so no real user tools are read.
    home: tempfile::TempDir,
}

/// The roles and the sandbox most tests use.
pub const BASE: &str = r#"
roles = ["public", "staff", "admin"]
audit_file = "audit.jsonl"

[sandbox]
root = "work"
"#;

impl Project {
    /// A project with this config.
    pub fn new(config: &str) -> Project {
        let project = Project {
            folder: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(project.tools()).unwrap();
        std::fs::create_dir_all(project.path().join("work")).unwrap();
        project.write("toolgate.toml", config);
        project
    }

    /// An empty folder, as a new user starts in.
    pub fn empty() -> Project {
        Project {
            folder: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.folder.path()
    }

    /// The project's tool folder.
    pub fn tools(&self) -> PathBuf {
        self.path().join(".toolgate/tools")
    }

    /// Writes a file of the project (folders made as needed).
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes an executable script of the project.
    pub fn script(&self, relative: &str, text: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(relative, text);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The binary, in the project folder, with an empty user config home and no colour.
    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        command
            .current_dir(self.path())
            .env("XDG_CONFIG_HOME", self.home.path())
            .env("NO_COLOR", "1")
            .env_remove("TOOLGATE_CONFIG")
            .env_remove("RUST_LOG");
        command
    }

    /// Runs the binary with `args` and `stdin`.
    pub fn run(&self, args: &[&str], stdin: &str) -> Ran {
        self.run_with(self.command().args(args), stdin)
    }

    /// Runs a prepared command with `stdin`.
    pub fn run_with(&self, command: &mut Command, stdin: &str) -> Ran {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolgate starts");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        Ran(child.wait_with_output().unwrap())
    }
}

/// How a run ended.
pub struct Ran(pub Output);

impl Ran {
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.0.stdout).unwrap_or_else(|error| {
            panic!(
                "stdout is not JSON ({error}): {}\nstderr: {}",
                self.stdout(),
                self.stderr()
            )
        })
    }

    /// Panics with both outputs unless the exit code is `code`.
    #[track_caller]
    pub fn expect(self, code: i32) -> Ran {
        assert_eq!(
            self.code(),
            code,
            "stdout: {}\nstderr: {}",
            self.stdout(),
            self.stderr()
        );
        self
    }
}

/// The Python of a virtual environment with the official MCP SDK.
pub fn python() -> &'static Path {
    toolgate_test_support::python_with_mcp_sdk(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// Runs the Python script `name` of tests/cli with the MCP SDK and reads the JSON it prints.
pub fn python_script(name: &str, args: &[&str]) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli")
        .join(name);
    let output = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .expect("python runs");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A `toolgate serve ...` process; killed when dropped.
pub struct Serving {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT` plus the path it serves.
    pub url: String,
    /// What it said before it listened (the summary, warnings).
    pub said: String,
}

impl Serving {
    /// Starts `toolgate serve <args>` on a free port and waits until it listens.
    pub fn start(project: &Project, args: &[&str], envs: &[(&str, &str)]) -> Serving {
        use std::io::{BufRead, BufReader};
        let mut child = project
            .command()
            .arg("serve")
            .args(args)
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolgate serve starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut said = String::new();
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|line| match line.strip_prefix("listening on ") {
                Some(url) => Some(url.to_owned()),
                None => {
                    said.push_str(&line);
                    said.push('\n');
                    None
                }
            })
            .unwrap_or_else(|| panic!("toolgate serve says where it listens; it said: {said}"));
        std::thread::spawn(move || lines.for_each(drop));
        Serving { child, url, said }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
