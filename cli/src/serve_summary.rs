//! What `toolgate serve` tells the person who started it (on stderr: stdout may be the MCP
//! channel): what is served to each role, who can sign in, and where to go.

use anstream::eprintln;

use toolgate::Caller;

use crate::config::{Built, Config};
use crate::output;

/// Says what is served, to whom, and at which addresses (`places`: what, URL).
pub fn say(config: &Config, built: &Built, places: &[(&str, String)]) {
    let registry = &built.registry;
    let per_role: Vec<String> = registry
        .roles()
        .names()
        .iter()
        .map(|role| {
            let seen = registry.visible_to(&Caller::new("toolgate-serve", role.as_str()));
            format!("{role} {}", seen.len())
        })
        .collect();
    eprintln!(
        "serving {} tools from {} (each role sees: {})",
        registry.len(),
        config.path().display(),
        per_role.join(" · ")
    );
    if registry.is_empty() {
        let folder = config.tool_folders().into_iter().next();
        let folder =
            folder.map_or_else(|| ".toolgate/tools".to_owned(), |f| f.display().to_string());
        eprintln!(
            "{} add one with `toolgate tools new NAME` (tool files in {folder} are picked up while serving), or turn on ready tools with [ready.files], [ready.web], ...",
            output::warn("no tools yet:")
        );
    }
    say_callers(built);
    for (what, url) in places {
        eprintln!("{what:<12} {url}");
    }
}

/// Each configured caller, and a warning for one who cannot sign in.
fn say_callers(built: &Built) {
    let mut ready = Vec::new();
    for (name, entry) in built.callers.iter() {
        let role = entry.caller.role();
        match (&entry.token_env, entry.has_token()) {
            (_, true) => ready.push(format!("{name} ({role})")),
            (Some(variable), false) => eprintln!(
                "{} `{name}` cannot sign in: its token variable {variable} is not set (set it before `toolgate serve`)",
                output::warn("caller:")
            ),
            (None, false) => eprintln!(
                "{} `{name}` cannot sign in: it has no `token_env` (name the variable holding its token)",
                output::warn("caller:")
            ),
        }
    }
    if !ready.is_empty() {
        eprintln!("callers      {}", ready.join(", "));
    }
}
