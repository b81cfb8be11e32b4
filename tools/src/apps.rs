//! Opening and closing applications from an allowlist: each name maps to a program and the
//! arguments it may be given. `close_app` closes only what `open_app` opened.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::{Value, json};
use toolgate::prelude::*;

use crate::programs::{SAFE_PATH, locate};

/// Variables passed on to applications (besides `PATH`): what a desktop program needs to
/// find its display and settings.
const PASSED_ON: &[&str] = &[
    "HOME",
    "LANG",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// One application on the allowlist.
#[derive(Debug, Clone)]
pub struct App {
    program: String,
    args: Vec<String>,
    allowed: Vec<String>,
    needs_display: bool,
}

impl App {
    /// The program (a name on `/usr/local/bin:/usr/bin:/bin`, or an absolute path), with no
    /// arguments allowed yet.
    pub fn new(program: impl Into<String>) -> Self {
        App {
            program: program.into(),
            args: Vec::new(),
            allowed: Vec::new(),
            needs_display: false,
        }
    }

    /// Arguments always passed first.
    pub fn fixed_args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Glob patterns the model's arguments must each match (e.g. `"*.txt"`, `"--new-window"`).
    pub fn allow_args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, patterns: I) -> Self {
        self.allowed = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// A desktop application: without a display (`DISPLAY` or `WAYLAND_DISPLAY`) it is
    /// `not_supported` rather than started to fail.
    pub fn needs_display(mut self) -> Self {
        self.needs_display = true;
        self
    }
}

/// The allowlist, and the applications opened so far (by application and by the caller
/// that opened them: a caller closes only its own).
#[derive(Debug, Clone, Default)]
pub struct AppsConfig {
    apps: BTreeMap<String, App>,
    opened: Arc<Mutex<BTreeMap<Opener, Vec<Child>>>>,
}

/// Whose processes: an application's name and the id of the caller that opened them.
type Opener = (String, String);

impl AppsConfig {
    /// An empty allowlist.
    pub fn new() -> Self {
        AppsConfig::default()
    }

    /// Allows `name` to open `app`.
    pub fn app(mut self, name: impl Into<String>, app: App) -> Self {
        self.apps.insert(name.into(), app);
        self
    }

    fn get(&self, name: &str) -> Result<&App, ToolError> {
        self.apps.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.apps.keys().map(String::as_str).collect();
            ToolError::new(
                "app_not_whitelisted",
                format!(
                    "`{}` is not on the allowlist; the applications are {}",
                    crate::quote::beginning(name),
                    names.join(", ")
                ),
            )
        })
    }

    /// The processes `caller` opened for `name` that still run (the others are reaped),
    /// taken out of the list.
    fn still_running(&self, name: &str, caller: &Caller) -> Vec<Child> {
        let mut opened = self.opened.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (name.to_owned(), caller.id().to_owned());
        let children = opened.remove(&key).unwrap_or_default();
        children
            .into_iter()
            .filter_map(|mut child| matches!(child.try_wait(), Ok(None)).then_some(child))
            .collect()
    }
}

/// Open an application from the allowlist, with arguments it allows.
#[tool(manual, group = "apps", risk = "medium", open_world)]
pub fn open_app(
    /// The application's name on the allowlist.
    app: String,
    /// Its arguments, each allowed by the application's patterns.
    #[serde(default)]
    args: Vec<String>,
    #[ctx] config: State<AppsConfig>,
    #[ctx] caller: Caller,
) -> Result<Value, ToolError> {
    let entry = config.get(&app)?;
    check_args(&app, entry, &args)?;
    let display = std::env::var_os("DISPLAY").or_else(|| std::env::var_os("WAYLAND_DISPLAY"));
    if entry.needs_display && display.is_none() {
        return Err(ToolError::new(
            "not_supported",
            format!(
                "`{app}` needs a display and this machine has none (no DISPLAY or WAYLAND_DISPLAY)"
            ),
        ));
    }
    let program = if entry.program.starts_with('/') {
        Some(PathBuf::from(&entry.program))
    } else {
        locate(&entry.program)
    };
    let program = program.filter(|path| path.is_file()).ok_or_else(|| {
        ToolError::new(
            "not_supported",
            format!(
                "`{app}` is allowed but its program `{}` is not installed here",
                entry.program
            ),
        )
    })?;
    let mut command = Command::new(&program);
    command
        .args(&entry.args)
        .args(&args)
        .env_clear()
        .env("PATH", SAFE_PATH)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for name in PASSED_ON {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    let child = command
        .spawn()
        .map_err(|error| ToolError::execution(format!("`{app}` could not be opened: {error}")))?;
    let pid = child.id();
    let mut running = config.still_running(&app, &caller);
    running.push(child);
    let count = running.len();
    config
        .opened
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert((app.clone(), caller.id().to_owned()), running);
    Ok(json!({"app": app, "pid": pid, "opened": true, "running_instances": count}))
}

fn check_args(app: &str, entry: &App, args: &[String]) -> Result<(), ToolError> {
    let patterns = globs(app, entry.allowed.iter())?;
    // An option (`-x`, `--name=...`) is allowed only by a pattern that is one: `*.txt` is
    // for file names, and must not let `--output=/x.txt` or `-o.txt` through.
    let options: GlobSet = globs(app, entry.allowed.iter().filter(|p| p.starts_with('-')))?;
    let allowed = |arg: &str| match arg.starts_with('-') {
        true => options.is_match(arg),
        false => patterns.is_match(arg),
    };
    match args.iter().find(|arg| !allowed(arg.as_str())) {
        None => Ok(()),
        Some(refused) => Err(ToolError::new(
            "argument_not_allowed",
            format!(
                "`{}` is not an argument `{app}` allows; it allows {}",
                crate::quote::beginning(refused),
                if entry.allowed.is_empty() {
                    "none".to_owned()
                } else {
                    entry.allowed.join(", ")
                }
            ),
        )),
    }
}

/// The patterns as one set.
fn globs<'a>(app: &str, patterns: impl Iterator<Item = &'a String>) -> Result<GlobSet, ToolError> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|error| {
            ToolError::execution(format!(
                "the allowlist pattern `{pattern}` of `{app}` is invalid: {error}"
            ))
        })?;
        set.add(glob);
    }
    set.build()
        .map_err(|error| ToolError::execution(error.to_string()))
}

/// Close an application that the caller opened with `open_app` (every instance of it the
/// caller opened). Unsaved work in it is lost.
#[tool(manual, group = "apps", risk = "high", destructive)]
pub fn close_app(
    /// The application's name on the allowlist.
    app: String,
    #[ctx] config: State<AppsConfig>,
    #[ctx] caller: Caller,
) -> Result<Value, ToolError> {
    config.get(&app)?;
    let running = config.still_running(&app, &caller);
    if running.is_empty() {
        return Err(ToolError::new(
            "not_running",
            format!(
                "`{app}` is not open (you can close only applications you opened with open_app)"
            ),
        ));
    }
    let mut closed = Vec::new();
    for mut child in running {
        let _ = child.kill();
        let _ = child.wait();
        closed.push(child.id());
    }
    Ok(json!({"app": app, "closed": true, "pids": closed}))
}
