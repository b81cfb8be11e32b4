//! What tools run in: the sandbox, the web's reach, how programs run, and the ready tool
//! families with their permissions.

use std::sync::Arc;

use toolgate::{ConfiguredTool, RegistryBuilder, ToolTemplate};

use super::Config;
use super::build::quoted;
use super::keys::{FamilyKey, ProgramKey, ProgramsKey, SearchKey};
use toolgate_tools::Problem;
use toolgate_tools::files::Sandbox;
use toolgate_tools::programs::{ArgKind, CommandConfig, ProgramPolicy};
use toolgate_tools::web::{BRAVE_URL, SearchBackend, WebConfig, WebSearchConfig};

impl Config {
    pub(super) fn sandbox(&self) -> Result<Option<Arc<Sandbox>>, Problem> {
        let Some(key) = &self.file.sandbox else {
            return Ok(None);
        };
        let unusable = |written: &toml::Spanned<std::path::PathBuf>, error: std::io::Error| {
            let path = self.resolve(written.get_ref());
            self.problem_at(
                written.span(),
                format!(
                    "the sandbox folder `{}` cannot be used: {error}",
                    path.display()
                ),
            )
        };
        let mut sandbox = Sandbox::new(self.resolve(key.root.get_ref()))
            .map_err(|error| unusable(&key.root, error))?;
        for (name, root) in &key.roots {
            sandbox = sandbox
                .with_root(name, self.resolve(root.get_ref()))
                .map_err(|error| unusable(root, error))?;
        }
        Ok(Some(Arc::new(sandbox)))
    }

    pub(super) fn web(&self) -> Result<WebConfig, Problem> {
        let key = &self.file.web;
        let mut web = WebConfig::default();
        for network in &key.allow_networks {
            web = web.allow_network(network.get_ref()).map_err(|error| {
                self.problem_at(
                    network.span(),
                    format!(
                        "`{}` is not a network such as \"127.0.0.0/8\": {error}",
                        network.get_ref()
                    ),
                )
            })?;
        }
        if let Some(timeout) = key.timeout {
            web.timeout = timeout;
        }
        if let Some(max_bytes) = key.max_bytes {
            web.max_bytes = max_bytes;
        }
        Ok(web)
    }

    pub(super) fn commands(&self) -> CommandConfig {
        let key = &self.file.commands;
        let mut commands = self.allowed_programs();
        if let Some(timeout) = key.timeout {
            commands.timeout = timeout;
        }
        if let Some(max) = key.max_output_bytes {
            commands.max_output_bytes = max;
        }
        if let Some(confine) = key.confine {
            commands.confine = confine;
        }
        commands
    }

    fn allowed_programs(&self) -> CommandConfig {
        let mut commands = CommandConfig::new();
        let Some(programs) = &self.file.ready.programs else {
            return commands;
        };
        for (name, key) in &programs.allow {
            let policy = match key.get_ref() {
                ProgramKey::Preset(preset) => match preset.as_str() {
                    "git_read_only" => ProgramPolicy::git_read_only(),
                    "ls" => ProgramPolicy::ls(),
                    "find" => ProgramPolicy::find(),
                    _ => ProgramPolicy::new(),
                },
                ProgramKey::Policy(policy) => {
                    let mut built = ProgramPolicy::new()
                        .subcommands(policy.subcommands.iter().cloned())
                        .flags(policy.flags.iter().cloned());
                    if let Some(kind) = policy.positionals.as_deref().and_then(arg_kind) {
                        built = built.positionals(kind);
                    }
                    built
                }
            };
            commands = commands.program(name.as_str(), policy);
        }
        commands
    }
    /// The enabled ready families, each with its permission.
    pub(super) fn ready_tools(
        &self,
        mut builder: RegistryBuilder,
        has_sandbox: bool,
    ) -> Result<RegistryBuilder, Problem> {
        let ready = &self.file.ready;
        if let Some(family) = &ready.files {
            if !has_sandbox {
                return Err(self.problem_at(
                    family.permission.span(),
                    "the files tools need `[sandbox] root`",
                ));
            }
            builder = self.family(builder, toolgate_tools::files::tools(), family)?;
        }
        if let Some(family) = &ready.web {
            builder = self.family(builder, [toolgate_tools::web::fetch_webpage_tool()], family)?;
        }
        if let Some(family) = &ready.system {
            builder = self.family(
                builder,
                [toolgate_tools::system::get_device_info_tool()],
                family,
            )?;
        }
        if let Some(programs) = &ready.programs {
            if !has_sandbox {
                return Err(self.problem_at(
                    programs.permission.span(),
                    "`run_command` needs `[sandbox] root`",
                ));
            }
            self.check_presets(programs)?;
            builder = builder.tool(
                toolgate_tools::programs::run_command_tool()
                    // A program's output: data from outside.
                    .untrusted_results()
                    .permission(programs.permission.get_ref()),
            );
        }
        if let Some(tasks) = &ready.tasks {
            let store = match &tasks.database {
                Some(path) => toolgate_tools::tasks::TaskStore::open(self.resolve(path)),
                None => toolgate_tools::tasks::TaskStore::open_default(),
            }
            .map_err(|error| {
                self.problem_at(
                    tasks.permission.span(),
                    format!("the task database cannot be opened: {error}"),
                )
            })?;
            builder = builder.state(store);
            for template in toolgate_tools::tasks::tools() {
                builder = builder.tool(template.permission(tasks.permission.get_ref()));
            }
        }
        if let Some(search) = &ready.search {
            builder = builder.state(self.search_backends(search)?).tool(
                toolgate_tools::web::web_search_tool().permission(search.permission.get_ref()),
            );
        }
        if let Some(family) = &ready.skills {
            if !has_sandbox {
                return Err(self.problem_at(
                    family.permission.span(),
                    "`create_skill` needs `[sandbox] root`",
                ));
            }
            builder = builder.state(toolgate_tools::skills::SkillsConfig::default());
            builder = self.family(
                builder,
                [toolgate_tools::skills::create_skill_tool()],
                family,
            )?;
        }
        Ok(builder)
    }

    fn family<const N: usize>(
        &self,
        mut builder: RegistryBuilder,
        templates: [ToolTemplate; N],
        family: &FamilyKey,
    ) -> Result<RegistryBuilder, Problem> {
        let names: Vec<String> = templates
            .iter()
            .map(|template| template.definition().name)
            .collect();
        if let Some(chosen) = &family.tools
            && let Some(unknown) = chosen.get_ref().iter().find(|name| !names.contains(name))
        {
            return Err(self.problem_at(
                chosen.span(),
                format!(
                    "`{unknown}` is not a tool of this family; its tools are {}",
                    quoted(&names)
                ),
            ));
        }
        for template in templates {
            let name = template.definition().name;
            let wanted = family
                .tools
                .as_ref()
                .is_none_or(|chosen| chosen.get_ref().contains(&name));
            if wanted {
                let tool: ConfiguredTool = template.permission(family.permission.get_ref());
                builder = builder.tool(tool);
            }
        }
        Ok(builder)
    }

    fn search_backends(&self, search: &SearchKey) -> Result<WebSearchConfig, Problem> {
        let mut config = WebSearchConfig::new(self.web()?);
        for (name, url) in &search.searxng {
            config = config.backend(name, SearchBackend::Searxng { url: url.clone() });
        }
        if let Some(variable) = &search.brave_key_env {
            config = config.backend(
                "brave",
                SearchBackend::Brave {
                    url: BRAVE_URL.to_owned(),
                    api_key_env: variable.clone(),
                },
            );
        }
        if search.searxng.is_empty() && search.brave_key_env.is_none() {
            return Err(self.problem_at(search.permission.span(), "`[ready.search]` names no backend: add `searxng = {name = \"http://...\"}` or `brave_key_env`"));
        }
        Ok(config)
    }

    fn check_presets(&self, programs: &ProgramsKey) -> Result<(), Problem> {
        for key in programs.allow.values() {
            match key.get_ref() {
                ProgramKey::Preset(preset)
                    if !["git_read_only", "ls", "find"].contains(&preset.as_str()) =>
                {
                    return Err(self.problem_at(key.span(), format!("`{preset}` is not a preset; the presets are \"git_read_only\", \"ls\", \"find\", or write a policy {{subcommands, flags, positionals}}")));
                }
                ProgramKey::Policy(policy)
                    if policy
                        .positionals
                        .as_deref()
                        .is_some_and(|kind| arg_kind(kind).is_none()) =>
                {
                    return Err(self.problem_at(
                        key.span(),
                        "`positionals` is \"path\", \"text\" or \"number\"",
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn arg_kind(kind: &str) -> Option<ArgKind> {
    match kind {
        "path" => Some(ArgKind::Path),
        "text" => Some(ArgKind::Text),
        "number" => Some(ArgKind::Number),
        _ => None,
    }
}
