//! From a read config to a registry: roles and callers checked against each other, state
//! opened, ready tools, MCP imports and tool files registered.

use std::collections::BTreeMap;
use std::sync::Arc;

use toolgate::approval::Approver;
use toolgate::audit::JsonlFileSink;
use toolgate::formats::Provider;
use toolgate::mcp::McpImport;
use toolgate::policy::PolicyMode;
use toolgate::store::Stores;
use toolgate::{ArgumentLimits, Caller, ConfiguredTool, Registry, RegistryBuilder, ToolTemplate};

use super::Config;
use super::callers::Callers;
use super::keys::{PolicyKey, ProgramKey};
use super::rates::parse_rate;
use crate::file_tools::{FileTools, Registered};
use crate::files::Sandbox;
use crate::problem::Problem;
use crate::programs::{ArgKind, CommandConfig, ProgramPolicy};
use crate::web::WebConfig;

/// What a config builds.
pub struct Built {
    /// The registry, with every tool the config offers.
    pub registry: Registry,
    /// The configured callers.
    pub callers: Callers,
    /// The role that decides approvals.
    pub approver_role: String,
    /// Where tool files are and what they run with (to watch them).
    pub file_tools: FileTools,
    /// The tool files registered.
    pub registered_files: Registered,
    /// Tool files that could not be used (the others were registered).
    pub file_problems: Vec<Problem>,
    /// How each MCP import went.
    pub imports: Vec<ImportStatus>,
}

/// One configured MCP server: connected (with how many tools) or why not.
#[derive(Debug, Clone)]
pub struct ImportStatus {
    /// Its name in the config.
    pub name: String,
    /// The command or URL.
    pub address: String,
    /// The number of tools imported, or the error.
    pub outcome: Result<usize, String>,
}

/// What [`Config::build_with`] leaves out or adds.
#[derive(Default, Clone)]
pub struct BuildOptions {
    /// Do not connect the MCP servers (their tools are left out).
    pub skip_mcp: bool,
    /// Do not read the tool folders.
    pub skip_tool_files: bool,
    /// Who is asked when a call needs approval (default: nobody; such calls wait with a
    /// ticket, for `toolgate approvals` or the HTTP approval routes).
    pub approver: Option<Arc<dyn Approver>>,
}

impl Config {
    /// Builds the registry the config describes. A problem with the config itself is an
    /// error; a tool file or MCP server that cannot be used is reported in [`Built`] and the
    /// rest is served.
    pub async fn build(&self) -> Result<Built, Problem> {
        self.build_with(BuildOptions::default()).await
    }

    /// [`build`](Self::build), leaving out or adding what `options` say.
    pub async fn build_with(&self, options: BuildOptions) -> Result<Built, Problem> {
        self.check_roles()?;
        let callers = self.callers()?;
        let approver_role = match &self.file.approver_role {
            Some(role) => role.get_ref().clone(),
            None => self
                .file
                .roles
                .get_ref()
                .last()
                .cloned()
                .unwrap_or_default(),
        };
        let sandbox = self.sandbox()?;
        let web = Arc::new(self.web()?);
        let commands = self.commands();
        let mut builder = self.governance().await?;
        builder = builder
            .approver_role(&approver_role)
            .shared_state(Arc::clone(&web))
            .state(commands.clone());
        if let Some(sandbox) = &sandbox {
            builder = builder.shared_state(Arc::clone(sandbox));
        }
        builder = self.ready_tools(builder, sandbox.is_some())?;
        builder = builder.require_compatible(self.providers()?);
        if let Some(approver) = options.approver {
            builder = builder.approver("terminal", move |request| approver.approve(request));
        }
        let registry = builder
            .build()
            .map_err(|error| self.problem(error.to_string()))?;
        let imports = if options.skip_mcp {
            Vec::new()
        } else {
            self.import_mcp(&registry).await
        };
        let folders = if options.skip_tool_files {
            Vec::new()
        } else {
            self.tool_folders()
        };
        let file_tools = FileTools {
            folders,
            sandbox,
            commands,
            web,
        };
        let mut registered_files = file_tools.register(&registry);
        let file_problems = std::mem::take(&mut registered_files.problems);
        Ok(Built {
            registry,
            callers,
            approver_role,
            file_tools,
            registered_files,
            file_problems,
            imports,
        })
    }

    /// The providers every tool must be usable with.
    fn providers(&self) -> Result<Vec<Provider>, Problem> {
        self.file
            .providers
            .iter()
            .map(|name| match name.get_ref().as_str() {
                "openai" => Ok(Provider::OpenAiStrict),
                "anthropic" => Ok(Provider::AnthropicStrict),
                "gemini" => Ok(Provider::Gemini),
                other => Err(self.problem_at(
                    name.span(),
                    format!(
                        "`{other}` is not a provider; use \"openai\", \"anthropic\" or \"gemini\""
                    ),
                )),
            })
            .collect()
    }

    /// Every role a key names is one of `roles`.
    fn check_roles(&self) -> Result<(), Problem> {
        let roles = self.file.roles.get_ref();
        if roles.is_empty() {
            return Err(self.problem_at(
                self.file.roles.span(),
                "`roles` names at least one role, lowest first",
            ));
        }
        let mut named = Vec::new();
        named.extend(self.file.approver_role.iter());
        named.extend(self.file.callers.values().map(|caller| &caller.role));
        let ready = &self.file.ready;
        for family in [&ready.files, &ready.web, &ready.system]
            .into_iter()
            .flatten()
        {
            named.push(&family.permission);
        }
        named.extend(ready.programs.iter().map(|programs| &programs.permission));
        named.extend(ready.tasks.iter().map(|tasks| &tasks.permission));
        named.extend(self.file.mcp.iter().map(|server| &server.permission));
        match named
            .into_iter()
            .find(|role| !roles.contains(role.get_ref()))
        {
            Some(unknown) => Err(self.problem_at(
                unknown.span(),
                format!(
                    "\"{}\" is not a role; the roles are {}",
                    unknown.get_ref(),
                    quoted(roles)
                ),
            )),
            None => Ok(()),
        }
    }

    fn callers(&self) -> Result<Callers, Problem> {
        let mut entries = BTreeMap::new();
        for (name, key) in &self.file.callers {
            let token = key
                .token_env
                .as_ref()
                .and_then(|variable| std::env::var(variable).ok())
                .filter(|token| !token.is_empty());
            let caller = Caller::new(name.as_str(), key.role.get_ref().as_str());
            entries.insert(name.clone(), Callers::entry(caller, token));
        }
        Ok(Callers::new(entries))
    }

    /// Roles, policy, limits, state, approval key and audit file.
    async fn governance(&self) -> Result<RegistryBuilder, Problem> {
        let file = &self.file;
        let mut builder = Registry::builder()
            .roles(file.roles.get_ref().iter().cloned())
            .linked_tools(false)
            .policy_mode(match file.policy {
                PolicyKey::Auto => PolicyMode::Auto,
                PolicyKey::Prompt => PolicyMode::Prompt,
                PolicyKey::Deny => PolicyMode::Deny,
            });
        if let Some(timeout) = file.default_timeout {
            builder = builder.default_timeout(timeout);
        }
        if let Some(limit) = file.max_concurrency {
            builder = builder.max_concurrency(limit);
        }
        let defaults = ArgumentLimits::default();
        builder = builder.argument_limits(ArgumentLimits {
            max_bytes: file.arguments.max_bytes.unwrap_or(defaults.max_bytes),
            max_depth: file.arguments.max_depth.unwrap_or(defaults.max_depth),
        });
        if let Some(rate) = &file.rate_limits.per_caller {
            let limit =
                parse_rate(rate.get_ref()).map_err(|why| self.problem_at(rate.span(), why))?;
            builder = builder.rate_limit_per_caller(limit);
        }
        for (tool, rate) in &file.rate_limits.tools {
            let limit =
                parse_rate(rate.get_ref()).map_err(|why| self.problem_at(rate.span(), why))?;
            builder = builder.rate_limit_tool(tool.as_str(), limit);
        }
        let shared = match &file.state {
            Some(address) if address.get_ref() != "memory" => {
                let stores = Stores::open(&self.state_address(address.get_ref()))
                    .await
                    .map_err(|error| self.problem_at(address.span(), error.to_string()))?;
                builder = builder.stores(&stores);
                true
            }
            _ => false,
        };
        match &file.approval_key_env {
            Some(variable) => {
                let key = std::env::var(variable.get_ref())
                    .ok()
                    .filter(|key| !key.is_empty())
                    .ok_or_else(|| {
                        self.problem_at(
                            variable.span(),
                            format!(
                                "the environment variable `{}` (the approval key) is not set",
                                variable.get_ref()
                            ),
                        )
                    })?;
                builder = builder.approval_key(key.into_bytes());
            }
            None if shared => {
                let span = file
                    .state
                    .as_ref()
                    .map(|state| state.span())
                    .unwrap_or(0..0);
                return Err(self.problem_at(span, "shared state needs a shared approval key: set `approval_key_env` to the name of a variable holding it, in every process"));
            }
            None => {}
        }
        if let Some(path) = &file.audit_file {
            let path = self.resolve(path);
            let sink = JsonlFileSink::open(&path)
                .map_err(|error| self.problem(format!("the audit file `{}` cannot be opened: {error}; one process writes it (is `toolgate serve` running?): give others their own file, or keep the audit in a shared `state`", path.display())))?;
            builder = builder.audit_sink(sink);
        }
        Ok(builder)
    }

    /// `sqlite:PATH` relative to the config's folder; other addresses as written.
    fn state_address(&self, address: &str) -> String {
        match address.strip_prefix("sqlite:") {
            Some(path) => format!(
                "sqlite:{}",
                self.resolve(std::path::Path::new(path)).display()
            ),
            None => address.to_owned(),
        }
    }

    fn sandbox(&self) -> Result<Option<Arc<Sandbox>>, Problem> {
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

    fn web(&self) -> Result<WebConfig, Problem> {
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

    fn commands(&self) -> CommandConfig {
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
    fn ready_tools(
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
            builder = self.family(builder, crate::files::tools(), family)?;
        }
        if let Some(family) = &ready.web {
            builder = self.family(builder, [crate::web::fetch_webpage_tool()], family)?;
        }
        if let Some(family) = &ready.system {
            builder = self.family(builder, [crate::system::get_device_info_tool()], family)?;
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
                crate::programs::run_command_tool().permission(programs.permission.get_ref()),
            );
        }
        if let Some(tasks) = &ready.tasks {
            let store = match &tasks.database {
                Some(path) => crate::tasks::TaskStore::open(self.resolve(path)),
                None => crate::tasks::TaskStore::open_default(),
            }
            .map_err(|error| {
                self.problem_at(
                    tasks.permission.span(),
                    format!("the task database cannot be opened: {error}"),
                )
            })?;
            builder = builder.state(store);
            for template in crate::tasks::tools() {
                builder = builder.tool(template.permission(tasks.permission.get_ref()));
            }
        }
        Ok(builder)
    }

    fn family<const N: usize>(
        &self,
        mut builder: RegistryBuilder,
        templates: [ToolTemplate; N],
        family: &super::keys::FamilyKey,
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

    fn check_presets(&self, programs: &super::keys::ProgramsKey) -> Result<(), Problem> {
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

    /// Connects each MCP server and registers its tools; a server that cannot be reached
    /// is reported, and the rest is served.
    async fn import_mcp(&self, registry: &Registry) -> Vec<ImportStatus> {
        let mut statuses = Vec::new();
        for server in &self.file.mcp {
            let (import, address) = match self.import_of(server) {
                Ok(found) => found,
                Err(why) => {
                    statuses.push(ImportStatus {
                        name: server.name.clone(),
                        address: String::new(),
                        outcome: Err(why),
                    });
                    continue;
                }
            };
            let outcome = match import.connect().await {
                Ok(connected) => {
                    let tools = connected.tools();
                    let count = tools.len();
                    let refused: Vec<String> = tools
                        .into_iter()
                        .filter_map(|tool| {
                            registry.register(tool).err().map(|error| error.to_string())
                        })
                        .collect();
                    if refused.is_empty() {
                        Ok(count)
                    } else {
                        Err(refused.join("; "))
                    }
                }
                Err(error) => Err(error.to_string()),
            };
            if let Err(error) = &outcome {
                tracing::warn!(server = %server.name, %error, "an MCP server's tools were not imported");
            }
            statuses.push(ImportStatus {
                name: server.name.clone(),
                address,
                outcome,
            });
        }
        statuses
    }

    fn import_of(&self, server: &super::keys::McpKey) -> Result<(McpImport, String), String> {
        let mut import = match (&server.command, &server.url) {
            (Some(command), None) => {
                let mut import =
                    McpImport::command(&server.name, command, server.args.iter().cloned());
                for (key, value) in &server.env {
                    let value =
                        crate::file_tools::interpolate_env(value).map_err(|error| error.message)?;
                    import = import.env(key, value);
                }
                (
                    import,
                    format!("{command} {}", server.args.join(" "))
                        .trim()
                        .to_owned(),
                )
            }
            (None, Some(url)) => {
                let mut import = McpImport::http(&server.name, url);
                if let Some(variable) = &server.token_env {
                    let token = std::env::var(variable).map_err(|_| {
                        format!("the environment variable `{variable}` (its token) is not set")
                    })?;
                    import = import.bearer_token(token);
                }
                (import, url.clone())
            }
            _ => return Err("an MCP server has either `command` or `url`".to_owned()),
        };
        import.0 = import.0.permission(server.permission.get_ref());
        if let Some(allow) = &server.allow {
            import.0 = import.0.allow(allow.iter().cloned());
        }
        import.0 = import.0.deny(server.deny.iter().cloned());
        if let Some(prefix) = &server.prefix {
            import.0 = import.0.prefix(prefix);
        }
        if let Some(timeout) = server.call_timeout {
            import.0 = import.0.call_timeout(timeout);
        }
        Ok(import)
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

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("\"{name}\""))
        .collect::<Vec<_>>()
        .join(", ")
}
