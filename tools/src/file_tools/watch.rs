//! Keeping a registry current while tool files are added, changed or removed: after a short
//! quiet time, the folders are read again and only what changed is unregistered and
//! registered (so MCP clients are sent `tools/list_changed`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use toolgate::{Registry, Tool};

use super::load::{FileTool, Registered, load_file, register_file_tool, taken, tool_files};
use super::{FileTools, Problem};

/// Tool folders being watched; dropping it stops watching (the tools stay registered).
pub struct Watching {
    _debouncer: Debouncer<RecommendedWatcher>,
    state: Arc<Mutex<Registered>>,
}

impl Watching {
    /// The problems of the last reading of the folders.
    pub fn problems(&self) -> Vec<Problem> {
        self.state
            .lock()
            .map(|state| state.problems.clone())
            .unwrap_or_default()
    }

    /// The names of the file tools registered now.
    pub fn tools(&self) -> Vec<String> {
        self.state
            .lock()
            .map(|state| state.tools.keys().cloned().collect())
            .unwrap_or_default()
    }
}

impl FileTools {
    /// Watches the folders (those that exist now) and keeps `registry` current, starting
    /// from what [`register`](FileTools::register) registered. Changes are applied `quiet`
    /// after the last one (a few hundred milliseconds suits editors that write in steps).
    pub fn watch(
        self,
        registry: Registry,
        registered: Registered,
        quiet: Duration,
    ) -> Result<Watching, String> {
        let state = Arc::new(Mutex::new(registered));
        let shared = Arc::clone(&state);
        let settings = self.clone();
        let mut debouncer = new_debouncer(quiet, move |result: DebounceEventResult| {
            if let Err(error) = result {
                tracing::warn!(%error, "watching the tool folders failed");
                return;
            }
            let Ok(mut state) = shared.lock() else {
                return;
            };
            reload(&settings, &registry, &mut state);
        })
        .map_err(|error| format!("the tool folders cannot be watched: {error}"))?;
        for folder in self.folders.iter().filter(|folder| folder.is_dir()) {
            debouncer
                .watcher()
                .watch(folder, RecursiveMode::NonRecursive)
                .map_err(|error| format!("`{}` cannot be watched: {error}", folder.display()))?;
        }
        Ok(Watching {
            _debouncer: debouncer,
            state,
        })
    }
}

/// Reads the folders again; unregisters the file tools that are gone or changed, registers
/// the new and changed ones.
fn reload(settings: &FileTools, registry: &Registry, state: &mut Registered) {
    let (fresh, mut problems) = read_again(settings, state);
    let unchanged =
        |name: &String, tool: &FileTool| fresh.get(name).is_some_and(|new| same(new, tool));
    let before = std::mem::take(&mut state.tools);
    for (name, tool) in before {
        if unchanged(&name, &tool) {
            state.tools.insert(name, tool);
        } else {
            registry.unregister(&name);
            tracing::info!(tool = %name, file = %tool.file().display(), "file tool removed");
        }
    }
    for (name, tool) in fresh {
        if state.tools.contains_key(&name) {
            continue;
        }
        match register_file_tool(registry, tool) {
            Ok(tool) => {
                tracing::info!(tool = %name, file = %tool.file().display(), "file tool registered");
                state.tools.insert(name, tool);
            }
            Err(problem) => problems.push(problem),
        }
    }
    for problem in &problems {
        tracing::warn!(%problem, "a tool file was not loaded");
    }
    state.problems = problems;
}

/// Every tool file, read again, by name. A name defined by two files goes to the file that
/// holds it now (a dropped-in file never takes over a working tool); between two new ones,
/// to the first in folder order. The other file is a problem naming both.
fn read_again(
    settings: &FileTools,
    state: &Registered,
) -> (BTreeMap<String, FileTool>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut fresh: BTreeMap<String, FileTool> = BTreeMap::new();
    for file in tool_files(&settings.folders) {
        let tool = match load_file(&file, settings) {
            Ok(tool) => tool,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let name = tool.definition().name;
        let holds_it = |tool: &FileTool| {
            state
                .tools
                .get(&name)
                .is_some_and(|held| held.file() == tool.file())
        };
        match fresh.remove(&name) {
            None => {
                fresh.insert(name, tool);
            }
            Some(first) if holds_it(&tool) && !holds_it(&first) => {
                problems.push(taken(&first, &tool.definition()));
                fresh.insert(name, tool);
            }
            Some(first) => {
                problems.push(taken(&tool, &first.definition()));
                fresh.insert(name, first);
            }
        }
    }
    (fresh, problems)
}

/// Whether two readings of a tool are the same tool: same file, same text. (A script a
/// command tool starts is read again by each call, so it may change freely.)
fn same(new: &FileTool, old: &FileTool) -> bool {
    new.file() == old.file() && new.text() == old.text()
}
