//! From a read config to a registry: roles and callers checked against each other, state
//! opened, ready tools, MCP imports and tool files registered.

use std::collections::BTreeMap;
use std::sync::Arc;

use toolgate::approval::Approver;
use toolgate::formats::Provider;
use toolgate::{Caller, Registry};

use super::Config;
use super::callers::Callers;
use toolgate_tools::Problem;
use toolgate_tools::file_tools::{FileTools, Registered};

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
    /// Where spans and metrics go (`[telemetry]`), to send what is left at exit.
    pub telemetry: Option<toolgate::telemetry::Telemetry>,
    /// The devices that connect to this hub (`[devices.ID]`), if any.
    pub devices: Option<toolgate::devices::DeviceHub>,
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
    /// Builds the registry the config describes, leaving out or adding what `options` say.
    /// A problem with the config itself is an error; a tool file or MCP server that cannot
    /// be used is reported in [`Built`] and the rest is served.
    pub async fn build_with(&self, options: BuildOptions) -> Result<Built, Problem> {
        self.check_roles()?;
        self.check_auth()?;
        self.check_telemetry()?;
        let callers = self.callers()?;
        let approver_role = self.approver_role();
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
        builder = self.rules(builder)?;
        let telemetry = self.telemetry()?;
        if let Some(telemetry) = &telemetry {
            builder = builder.telemetry(telemetry.clone());
        }
        if let Some(approver) = options.approver {
            builder = builder.approver("terminal", move |request| approver.approve(request));
        }
        let (builder, devices) = self.with_devices(builder)?;
        let registry = builder
            .build()
            .map_err(|error| self.build_problem(&error))?;
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
            sources: self.file.sources.clone(),
        };
        let mut registered_files = file_tools.register(&registry);
        let file_problems = std::mem::take(&mut registered_files.problems);
        let every_tool_is_in = !options.skip_mcp
            && !options.skip_tool_files
            && imports.iter().all(|import| import.outcome.is_ok());
        if every_tool_is_in {
            self.check_limited_tools(&registry)?;
            // Every tool is in: rules that do not compile now are mistakes.
            if let Some(problem) = registry.rule_problems().into_iter().next() {
                let file = std::path::Path::new(&problem.file);
                return Err(Problem::new(file, problem.line, problem.message));
            }
        }
        Ok(Built {
            registry,
            callers,
            approver_role,
            file_tools,
            registered_files,
            file_problems,
            imports,
            telemetry,
            devices,
        })
    }

    /// The role that decides approvals: the configured one, else the highest.
    fn approver_role(&self) -> String {
        match &self.file.approver_role {
            Some(role) => role.get_ref().clone(),
            None => self
                .file
                .roles
                .get_ref()
                .last()
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// The configured devices' hub, its stages added to `builder`.
    fn with_devices(
        &self,
        builder: toolgate::RegistryBuilder,
    ) -> Result<
        (
            toolgate::RegistryBuilder,
            Option<toolgate::devices::DeviceHub>,
        ),
        Problem,
    > {
        let devices = self.device_hub()?;
        let builder = match &devices {
            Some(hub) => hub.attach(builder),
            None => builder,
        };
        Ok((builder, devices))
    }

    /// A registry that could not be built, said as one problem: a rule's at its own file and
    /// line, anything else at the config.
    fn build_problem(&self, error: &toolgate::BuildError) -> Problem {
        let rule = error.problems().iter().find_map(|problem| match problem {
            toolgate::BuildProblem::Rule {
                file,
                line,
                message,
            } => Some(Problem::new(
                std::path::Path::new(file),
                *line,
                message.clone(),
            )),
            _ => None,
        });
        rule.unwrap_or_else(|| self.problem(error.to_string()))
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
        named.extend(ready.search.iter().map(|search| &search.permission));
        named.extend(ready.skills.iter().map(|skills| &skills.permission));
        named.extend(self.file.mcp.iter().map(|server| &server.permission));
        for device in self.file.devices.values().map(|device| device.get_ref()) {
            named.push(&device.permission);
            named.extend(device.permissions.values());
        }
        named.extend(self.auth_roles());
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
        // Which caller each token was first given to: a token two callers share would make
        // one of them the other (whichever is found first).
        let mut owners: BTreeMap<String, &str> = BTreeMap::new();
        for (name, key) in &self.file.callers {
            let token = key
                .token_env
                .as_ref()
                .and_then(|variable| std::env::var(variable).ok())
                .filter(|token| !token.is_empty());
            if let Some(token) = &token
                && let Some(first) = owners.insert(token.clone(), name.as_str())
            {
                return Err(self.problem_at(
                    key.role.span(),
                    format!(
                        "callers \"{first}\" and \"{name}\" have the same bearer token (from their `token_env` variables); give each caller a token of its own, or one would be taken for the other"
                    ),
                ));
            }
            let caller = Caller::new(name.as_str(), key.role.get_ref().as_str());
            let variable = key.token_env.clone();
            entries.insert(name.clone(), Callers::entry(caller, token, variable));
        }
        Ok(Callers::new(entries))
    }
}

pub(super) fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("\"{name}\""))
        .collect::<Vec<_>>()
        .join(", ")
}
