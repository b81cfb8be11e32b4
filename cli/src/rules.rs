//! While `toolgate serve` runs, a change of the `policies` files is read at once: the new
//! rules decide from then on, or, if they do not compile, the rules deciding now stay and
//! the problem is said with its file and line.

use std::path::Path;
use std::time::Duration;

use anstream::eprintln;
use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use toolgate::Registry;

use crate::config::Config;
use crate::output;

/// Watches the config's rules, if it has any; the watch ends when the value is dropped.
pub fn watch(config: &Config, registry: &Registry) -> Option<Debouncer<RecommendedWatcher>> {
    let path = config.resolve(config.file.policies.as_ref()?.get_ref());
    let registry = registry.clone();
    let mut debouncer = new_debouncer(
        Duration::from_millis(300),
        move |result: DebounceEventResult| {
            if result.is_ok() {
                reload(&registry);
            }
        },
    )
    .ok()?;
    match debouncer
        .watcher()
        .watch(&path, RecursiveMode::NonRecursive)
    {
        Ok(()) => Some(debouncer),
        Err(error) => {
            eprintln!(
                "{} `{}` cannot be watched ({error}); restart to read changed rules",
                output::warn("rules:"),
                shown(&path)
            );
            None
        }
    }
}

fn reload(registry: &Registry) {
    match registry.reload_rules() {
        Ok(()) => eprintln!("rules read again; they decide from now on"),
        Err(problems) => {
            for problem in problems {
                eprintln!(
                    "{} {problem} (the rules deciding before stay)",
                    output::warn("rules not changed:")
                );
            }
        }
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}
