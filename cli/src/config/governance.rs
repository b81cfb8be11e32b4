//! Roles, policy, limits, state, the approval key and the audit file of a config.

use toolgate::audit::JsonlFileSink;
use toolgate::policy::PolicyMode;
use toolgate::store::Stores;
use toolgate::{ArgumentLimits, Registry, RegistryBuilder};

use super::Config;
use super::keys::PolicyKey;
use super::rates::parse_rate;
use toolgate_tools::Problem;

impl Config {
    /// Roles, policy, limits, state, approval key and audit file.
    pub(super) async fn governance(&self) -> Result<RegistryBuilder, Problem> {
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
        builder = self.budgets(builder)?;
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
                .map_err(|error| self.problem(format!("the audit file `{}` cannot be opened: {error}; check that its folder exists and that this user may write it", path.display())))?;
            builder = builder.audit_sink(sink);
        }
        Ok(builder)
    }

    /// Every tool named in `[rate_limits.tools]` is a tool (by its name or the spelling a
    /// provider uses): a limit on no tool would limit nothing. Checked once every tool is
    /// registered (with an import down, its tools cannot be told from mistakes).
    pub(super) fn check_limited_tools(&self, registry: &Registry) -> Result<(), Problem> {
        let top = self
            .file
            .roles
            .get_ref()
            .last()
            .cloned()
            .unwrap_or_default();
        let everyone = toolgate::Caller::new("toolgate-config", top);
        for (tool, rate) in &self.file.rate_limits.tools {
            if registry.definition(&everyone, tool).is_none() {
                return Err(self.problem_at(
                    rate.span(),
                    format!("`[rate_limits.tools]` names `{tool}`, which is no tool, so its limit would limit nothing; write a tool's name as `toolgate tools list` shows it"),
                ));
            }
        }
        Ok(())
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
}
